#!/usr/bin/python3
"""Test-only reference of the 2-D scattering transform (order 2), written
from Kymatio's documented definition (Scattering2D, filter_bank.py) with
numpy.fft in float64, vectorised over a batch of images.

    scatter_ref.py J L H W IN.f32 OUT.f64 [phi|psi N]

IN: n x H x W float32 images (raw, row major); OUT: n x C x H' x W'
float64 coefficients, channels S0, all S1 (j1 major), all S2 (j1, l1,
then j2 > j1, l2) -- Kymatio's order.  With "phi" or "psi N" as extra
arguments, writes the filter's real DFT at resolution 0 instead.
"""
import sys
import numpy as np


def gabor_2d(M, N, sigma, theta, xi, slant=1.0):
    R = np.array([[np.cos(theta), -np.sin(theta)],
                  [np.sin(theta), np.cos(theta)]])
    D = np.diag([1.0, slant * slant])
    curv = R @ D @ R.T / (2 * sigma * sigma)
    g = np.zeros((M, N), complex)
    for ex in range(-2, 3):
        for ey in range(-2, 3):
            xx, yy = np.mgrid[ex * M:(ex + 1) * M, ey * N:(ey + 1) * N]
            arg = -(curv[0, 0] * xx * xx + (curv[0, 1] + curv[1, 0]) * xx * yy
                    + curv[1, 1] * yy * yy) \
                + 1j * xi * (xx * np.cos(theta) + yy * np.sin(theta))
            g += np.exp(arg)
    return g / (2 * 3.1415 * sigma * sigma / slant)


def morlet_2d(M, N, sigma, theta, xi, slant):
    wv = gabor_2d(M, N, sigma, theta, xi, slant)
    wm = gabor_2d(M, N, sigma, theta, 0, slant)
    return wv - wv.sum() / wm.sum() * wm


def periodize(f, res):
    M, N = f.shape
    k = 2 ** res
    f = f.copy()
    sx, lx = int(M * 2 ** (-res - 1)), int(M * (1 - 2 ** -res))
    sy, ly = int(N * 2 ** (-res - 1)), int(N * (1 - 2 ** -res))
    f[sx:sx + lx, :] = 0
    f[:, sy:sy + ly] = 0
    return f.reshape(k, M // k, k, N // k).sum(axis=(0, 2))


def filter_bank(M, N, J, L):
    psi = []
    for j in range(J):
        for l in range(L):
            f = np.real(np.fft.fft2(morlet_2d(
                M, N, 0.8 * 2 ** j, (int(L - L / 2 - 1) - l) * np.pi / L,
                3.0 / 4.0 * np.pi / 2 ** j, 4.0 / L)))
            psi.append({'j': j, 'f': f,
                        'lv': [periodize(f, r) for r in range(j + 1)]})
    f = np.real(np.fft.fft2(gabor_2d(M, N, 0.8 * 2 ** (J - 1), 0, 0)))
    phi = {'f': f, 'lv': [periodize(f, r) for r in range(J)]}
    return phi, psi


def sub(x, k):
    """Subsample in space by k: the mean of the k x k spectral aliases."""
    if k == 1:
        return x
    B, M, N = x.shape
    return x.reshape(B, k, M // k, k, N // k).mean(axis=(1, 3))


def padded(n, J):
    return ((n + 2 ** J) // 2 ** J + 1) * 2 ** J


def scattering(x, J, L, phi, psi):
    B, M, N = x.shape
    Mp, Np = padded(M, J), padded(N, J)
    t, l = (Mp - M) // 2, (Np - N) // 2
    xp = np.pad(x, ((0, 0), (t, Mp - M - t), (l, Np - N - l)), mode='reflect')
    U0 = np.fft.fft2(xp)
    out = []

    def low(U, r):
        return np.real(np.fft.ifft2(sub(U * phi['lv'][r], 2 ** (J - r))))[
            :, 1:-1, 1:-1]

    out.append(low(U0, 0))
    s2 = []
    for p1 in psi:
        j1 = p1['j']
        U1 = np.fft.fft2(np.abs(np.fft.ifft2(sub(U0 * p1['lv'][0], 2 ** j1))))
        out.append(low(U1, j1))
        for p2 in psi:
            j2 = p2['j']
            if j2 <= j1:
                continue
            U2 = np.fft.fft2(np.abs(np.fft.ifft2(
                sub(U1 * p2['lv'][j1], 2 ** (j2 - j1)))))
            s2.append(low(U2, j2))
    return np.stack(out + s2, axis=1)


def main():
    J, L, H, W = (int(a) for a in sys.argv[1:5])
    Mp, Np = padded(H, J), padded(W, J)
    phi, psi = filter_bank(Mp, Np, J, L)
    if len(sys.argv) > 7:
        f = phi['f'] if sys.argv[7] == 'phi' else psi[int(sys.argv[8])]['f']
        f.astype(np.float64).tofile(sys.argv[6])
        return
    x = np.fromfile(sys.argv[5], np.float32).astype(np.float64)
    x = x.reshape(-1, H, W)
    with open(sys.argv[6], 'wb') as fp:
        for i in range(0, len(x), 512):
            scattering(x[i:i + 512], J, L, phi, psi).tofile(fp)


if __name__ == '__main__':
    main()
