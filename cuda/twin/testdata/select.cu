
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v;
        if (i % 2 == 0)
            v = in[i];
        else
            v = in[n - i];
        out[i] = v;
    }
