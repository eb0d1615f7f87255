"""Stage 1, on the GPU: build the kernels (nvcc, cuobjdump), check and time them
(:mod:`analysis.gpu.harness`), profile them under Nsight Compute, and measure the references
(ceilings, library GEMMs, paired timings); also the GPU of a cluster node."""
