"""Provides MAGMA statistics and trust: distributions per problem size, and which numbers cannot be believed."""
