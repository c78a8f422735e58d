// Stand-in for cuda_gl_interop.h: the benchmark maps no GL buffer (bUsePBO is false).
