"""Provides the MAGMA tester reader: the header-to-layout table and the block reader."""
