/*
 * simd.h: PV_CLONES compiles a hot loop three times, for AVX-512F, AVX2
 * and the baseline instruction set, the version for the CPU being chosen
 * when the program is loaded (GCC's target_clones, an ifunc).  The build
 * is ISO C (-std=c11), where GCC does not contract a * b + c into a fused
 * multiply-add (-ffp-contract=off), so every version performs the same
 * correctly rounded IEEE operations in the same order per element and
 * gives the same bits: only the vector width changes.  Loops written in
 * blocks of local arrays (see lib/ml/nn.c, VB) vectorise at -O2.
 * PRIVADA_NO_SIMD at build time, another compiler or architecture leaves
 * the baseline only.
 */
#ifndef PRIVADA_SIMD_H
#define PRIVADA_SIMD_H

#if !defined(PRIVADA_NO_SIMD) && defined(__GNUC__) && !defined(__clang__) && \
    defined(__x86_64__) && defined(__linux__)
#define PV_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define PV_CLONES
#endif

#endif
