// Stand-in for the GL header the CUDA samples include: the benchmark draws nothing.
