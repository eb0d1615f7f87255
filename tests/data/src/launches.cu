// Small real kernels for the reports in tests/data that are not GEMMs and not one launch:
// `add` (a non-GEMM kernel), `axpy<float>` and `axpy<double>` (one template, two
// instantiations: one function base name, two demangled names), `scale`, and `apply`
// called with two different lambdas. Inputs are random, never zeros.
//   launches add N        one launch of add on N floats
//   launches several N    add three times, axpy<float>, axpy<double>, scale, apply twice
// Built with: nvcc -O3 -arch=sm_90 --extended-lambda -o launches launches.cu
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                   \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            std::exit(1);                                                             \
        }                                                                             \
    } while (0)

__global__ void add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

template <typename T>
__global__ void axpy(T alpha, const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = alpha * x[i] + y[i];
}

__global__ void scale(float* x, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= s;
}

template <typename F>
__global__ void apply(F f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) f(i);
}

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s add|several N\n", argv[0]);
        return 2;
    }
    const int n = std::atoi(argv[2]);
    std::vector<float> h(n);
    std::vector<double> hd(n);
    std::srand(1);
    for (int i = 0; i < n; ++i) {
        h[i] = static_cast<float>(std::rand()) / RAND_MAX + 0.5f;
        hd[i] = static_cast<double>(std::rand()) / RAND_MAX + 0.5;
    }
    float *a, *b, *c;
    double *xd, *yd;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    CHECK(cudaMalloc(&c, n * sizeof(float)));
    CHECK(cudaMalloc(&xd, n * sizeof(double)));
    CHECK(cudaMalloc(&yd, n * sizeof(double)));
    CHECK(cudaMemcpy(a, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(xd, hd.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(yd, hd.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    const int block = 256, grid = (n + block - 1) / block;
    add<<<grid, block>>>(a, b, c, n);
    if (std::strcmp(argv[1], "several") == 0) {
        add<<<grid, block>>>(c, b, a, n);
        add<<<grid, block>>>(a, c, b, n);
        axpy<float><<<grid, block>>>(2.0f, a, b, n);
        axpy<double><<<grid, block>>>(2.0, xd, yd, n);
        scale<<<grid / 2, block * 2>>>(c, 0.5f, n);
        float* cp = c;
        apply<<<grid, block>>>([=] __device__(int i) { cp[i] += 1.0f; }, n);
        apply<<<grid, block>>>([=] __device__(int i) { cp[i] *= 2.0f; }, n);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h.data(), c, n * sizeof(float), cudaMemcpyDeviceToHost));
    std::printf("c[0] = %g\n", h[0]);
    return 0;
}
