// Kernel only. im2col for one NCHW image (Caffe/PyTorch unfold layout) with stride, padding and
// dilation: col[(c*R + r)*S + s, oh*OW + ow] = img[c, oh*sh - ph + r*dh, ow*sw - pw + s*dw] (0 outside).
// One thread per col element, grid-stride loop; any 1-D launch.
__global__ void im2col_nchw_kernel(const float* __restrict__ img, float* __restrict__ col,
                                   int C, int H, int W, int R, int S,
                                   int sh, int sw, int ph, int pw, int dh, int dw,
                                   int OH, int OW) {
  const long long total = (long long)C * R * S * OH * OW;
  for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
       idx += (long long)gridDim.x * blockDim.x) {
    const int ow = (int)(idx % OW);
    long long t = idx / OW;
    const int oh = (int)(t % OH);
    t /= OH;
    const int s = (int)(t % S);
    t /= S;
    const int r = (int)(t % R);
    const int c = (int)(t / R);
    const int ih = oh * sh - ph + r * dh;
    const int iw = ow * sw - pw + s * dw;
    col[idx] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? img[((size_t)c * H + ih) * W + iw] : 0.0f;
  }
}
