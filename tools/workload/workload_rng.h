/*
 * workload_rng.h - the random bit generator shared by eigstream_workload and
 * eigstream-sim: splitmix64 (seeding) and xoshiro256** (the stream).
 *
 * Header-only (static inline) so that the hot loops that draw from it keep
 * inlining it. Each user derives the state from its own seed, and maps the
 * 64-bit outputs to floats itself: the generators are shared, the streams
 * (and so the matrices and frames of a given seed) are not changed by sharing.
 */
#ifndef EIGSTREAM_WORKLOAD_RNG_H
#define EIGSTREAM_WORKLOAD_RNG_H

#include <complex.h>
#include <math.h>
#include <stdint.h>

/* xoshiro256** state; must not be all zero (seed it through splitmix64). */
typedef struct workload_rng {
    uint64_t s[4];
} workload_rng;

/* Advances the splitmix64 counter *x and returns its next output. */
static inline uint64_t workload_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Fills the state with four splitmix64 outputs of the counter x. */
static inline workload_rng workload_rng_from_splitmix64(uint64_t x)
{
    workload_rng r;
    for (int i = 0; i < 4; i++)
        r.s[i] = workload_splitmix64(&x);
    return r;
}

static inline uint64_t workload_rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* Next 64 random bits of the xoshiro256** stream. */
static inline uint64_t workload_rng_next(workload_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = workload_rotl64(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = workload_rotl64(s[3], 45);
    return result;
}

/* The stream of one (seed, a, b) (eigstream-sim: a frame and a cell of it):
 * streams of different (a, b) are independent and reproducible in any order. */
static inline workload_rng workload_rng_for(uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t x = seed;
    x = workload_splitmix64(&x) ^ a;
    x = workload_splitmix64(&x) ^ b;
    return workload_rng_from_splitmix64(x);
}

/* Circular complex Gaussian of unit variance E|z|^2 = 1 (Box-Muller). */
static inline double complex workload_rng_cgauss(workload_rng *g)
{
    /* (0, 1]: never log(0). */
    double u1 = ((workload_rng_next(g) >> 11) + 1) * 0x1.0p-53;
    double u2 = (workload_rng_next(g) >> 11) * 0x1.0p-53;
    double radius = sqrt(-log(u1)); /* sqrt(-2 log u1) / sqrt(2) per component */
    const double two_pi = 6.28318530717958647692;
    return CMPLX(radius * cos(two_pi * u2), radius * sin(two_pi * u2));
}

#endif
