"""Provides the profiler readers (nsys, ncu, nvprof, PyProf, PyTorch traces, markers): each returns the canonical kernel table."""
