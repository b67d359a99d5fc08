"""Provides the study screens: MAGMA, kernels, scaling and the folder summary, with their own widgets."""
