// Small real kernels for the reports in tests/data that need NVTX ranges, several
// instantiations of one template, or hundreds of launches: `add`, `axpy<T>` and `scale<T>`
// (T = float, double, int). Inputs are random, never zeros.
//   more_launches ranges-ab N   NVTX push/pop range "alpha" (add, scale<float>), then
//                               push/pop range "beta" (axpy<double> three times)
//   more_launches ranges-ba N   the same two ranges, "beta" first, then "alpha"
//   more_launches ranges-se N   the two ranges as NVTX start/end ranges, "alpha" first
//   more_launches nested N      add outside any range; add and scale<float> in
//                               epoch (start/end) > step > forward; axpy<float> in
//                               epoch > step > backward > grad; scale<double> in epoch and
//                               in push/pop range "read" of domain "loader"; add outside
//   more_launches templates N   scale<float>, scale<double>, scale<int>, scale<float>
//   more_launches many N        add, then 100 times scale<float>, scale<double>,
//                               scale<int>, add: 401 launches
// Every range ends with cudaDeviceSynchronize, so that ncu's range replay can replay it.
// Built with: nvcc -O3 -arch=sm_90 -o more_launches more_launches.cu -ldl
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include <nvtx3/nvToolsExt.h>

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

template <typename T>
__global__ void scale(T* x, T s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= s;
}

struct Buffers {
    int n, grid, block;
    float *a, *b, *c;
    double *xd, *yd;
    int* xi;
};

static void alpha_work(const Buffers& d) {
    add<<<d.grid, d.block>>>(d.a, d.b, d.c, d.n);
    scale<float><<<d.grid, d.block>>>(d.c, 0.5f, d.n);
    CHECK(cudaDeviceSynchronize());
}

static void beta_work(const Buffers& d) {
    for (int k = 0; k < 3; ++k) axpy<double><<<d.grid, d.block>>>(0.5, d.xd, d.yd, d.n);
    CHECK(cudaDeviceSynchronize());
}

static void ranges_pushpop(const Buffers& d, bool alpha_first) {
    for (int k = 0; k < 2; ++k) {
        const bool alpha = (k == 0) == alpha_first;
        nvtxRangePushA(alpha ? "alpha" : "beta");
        if (alpha) alpha_work(d); else beta_work(d);
        nvtxRangePop();
    }
}

static void ranges_startend(const Buffers& d) {
    nvtxRangeId_t id = nvtxRangeStartA("alpha");
    alpha_work(d);
    nvtxRangeEnd(id);
    id = nvtxRangeStartA("beta");
    beta_work(d);
    nvtxRangeEnd(id);
}

static void nested(const Buffers& d) {
    add<<<d.grid, d.block>>>(d.a, d.b, d.c, d.n);
    nvtxRangeId_t epoch = nvtxRangeStartA("epoch");
    nvtxRangePushA("step");
    nvtxRangePushA("forward");
    add<<<d.grid, d.block>>>(d.c, d.b, d.a, d.n);
    scale<float><<<d.grid, d.block>>>(d.a, 0.5f, d.n);
    nvtxRangePop();
    nvtxRangePushA("backward");
    nvtxRangePushA("grad");
    axpy<float><<<d.grid, d.block>>>(2.0f, d.a, d.b, d.n);
    nvtxRangePop();
    nvtxRangePop();
    nvtxRangePop();
    nvtxDomainHandle_t loader = nvtxDomainCreateA("loader");
    nvtxEventAttributes_t attr = {};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = "read";
    nvtxDomainRangePushEx(loader, &attr);
    scale<double><<<d.grid, d.block>>>(d.xd, 0.5, d.n);
    nvtxDomainRangePop(loader);
    nvtxRangeEnd(epoch);
    add<<<d.grid, d.block>>>(d.a, d.b, d.c, d.n);
}

static void templates(const Buffers& d) {
    scale<float><<<d.grid, d.block>>>(d.c, 0.5f, d.n);
    scale<double><<<d.grid, d.block>>>(d.xd, 0.5, d.n);
    scale<int><<<d.grid, d.block>>>(d.xi, 3, d.n);
    scale<float><<<d.grid, d.block>>>(d.c, 2.0f, d.n);
}

static void many(const Buffers& d) {
    add<<<d.grid, d.block>>>(d.a, d.b, d.c, d.n);
    for (int k = 0; k < 100; ++k) {  // factors that neither underflow nor overflow in 100 steps
        scale<float><<<d.grid, d.block>>>(d.c, 0.99f, d.n);
        scale<double><<<d.grid, d.block>>>(d.xd, 1.01, d.n);
        scale<int><<<d.grid, d.block>>>(d.xi, -1, d.n);
        add<<<d.grid, d.block>>>(d.c, d.b, d.a, d.n);
    }
}

int main(int argc, char** argv) {
    const char* modes[] = {"ranges-ab", "ranges-ba", "ranges-se", "nested", "templates", "many"};
    bool known = false;
    for (const char* m : modes) known = known || (argc == 3 && std::strcmp(argv[1], m) == 0);
    if (!known) {
        std::fprintf(stderr, "usage: %s ranges-ab|ranges-ba|ranges-se|nested|templates|many N\n", argv[0]);
        return 2;
    }
    const std::string_view mode = argv[1];
    Buffers d;
    d.n = std::atoi(argv[2]);
    d.block = 256;
    d.grid = (d.n + d.block - 1) / d.block;
    const int n = d.n;
    std::vector<float> h(n);
    std::vector<double> hd(n);
    std::vector<int> hi(n);
    std::srand(1);
    for (int i = 0; i < n; ++i) {
        h[i] = static_cast<float>(std::rand()) / RAND_MAX + 0.5f;
        hd[i] = static_cast<double>(std::rand()) / RAND_MAX + 0.5;
        hi[i] = 1 + std::rand() % 1000;
    }
    CHECK(cudaMalloc(&d.a, n * sizeof(float)));
    CHECK(cudaMalloc(&d.b, n * sizeof(float)));
    CHECK(cudaMalloc(&d.c, n * sizeof(float)));
    CHECK(cudaMalloc(&d.xd, n * sizeof(double)));
    CHECK(cudaMalloc(&d.yd, n * sizeof(double)));
    CHECK(cudaMalloc(&d.xi, n * sizeof(int)));
    CHECK(cudaMemcpy(d.a, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d.b, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d.c, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d.xd, hd.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d.yd, hd.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d.xi, hi.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaDeviceSynchronize());
    if (mode == "ranges-ab") ranges_pushpop(d, true);
    else if (mode == "ranges-ba") ranges_pushpop(d, false);
    else if (mode == "ranges-se") ranges_startend(d);
    else if (mode == "nested") nested(d);
    else if (mode == "templates") templates(d);
    else many(d);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h.data(), d.c, n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hd.data(), d.yd, n * sizeof(double), cudaMemcpyDeviceToHost));
    std::printf("c[0] = %g, yd[0] = %g\n", h[0], hd[0]);
    return 0;
}
