
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef SSM_MVEC                                   /* glibc's vectorised exp (libmvec) inside the simd loops */
float expf(float) __attribute__((simd("notinbranch")));
double exp(double) __attribute__((simd("notinbranch")));
#endif
/* Rows b0..b1-1 of s_t = exp(dt_t A) s_{t-1} + dt_t B_t x_t, y_t = <s_t, C_t>. Row-major layouts:
   delta, x, y, gdelta, gx: (b, l, d); B, C, gB, gC: (b, l, n); At: (n, d), or (b, n, d) when a_rows;
   states with d innermost: s0, s_last, g_last, gs0, gAt (b, n, d), hat (b, m, n, d);
   at (b, m): times whose states go to hat (-1: the zero state). Optional pointers may be NULL.
   The forward keeps no states for the backward: the backward recomputes one row's states at a time into an
   (l, n, d) buffer, with their decays exp(dt A) in a second one that the adjoint pass reads back, which costs
   one more exp per update but saves writing and reading all (b, l, n, d) states through memory. */
#define SCAN(T, EXP, SFX)                                                                                       \
void ssm_scan_fwd_##SFX(int64_t b0, int64_t b1, int64_t l, int64_t d, int64_t n, const T* delta, const T* At,    \
                        int a_rows, const T* B, const T* C, const T* x, const T* s0, T* y, T* s_last,          \
                        int64_t m, const int64_t* at, T* hat) {                                                   \
  T* u = malloc(sizeof(T) * d);                                                                                   \
  for (int64_t r = b0; r < b1; r++) {                                                                             \
    T* s = s_last + r * n * d; const T* Ar = a_rows ? At + r * n * d : At;                                        \
    if (s0) memcpy(s, s0 + r * n * d, sizeof(T) * n * d); else memset(s, 0, sizeof(T) * n * d);                  \
    for (int64_t j = 0; j < m; j++) if (at[r * m + j] < 0) memset(hat + (r * m + j) * n * d, 0, sizeof(T) * n * d); \
    for (int64_t t = 0; t < l; t++) {                                                                             \
      int64_t o = (r * l + t) * d;                                                                                \
      const T *dt = delta + o, *xt = x + o, *Bt = B + (r * l + t) * n, *Ct = C + (r * l + t) * n;                \
      _Pragma("omp simd")                                                                                         \
      for (int64_t i = 0; i < d; i++) u[i] = dt[i] * xt[i];                                                       \
      if (y) memset(y + o, 0, sizeof(T) * d);                                                                     \
      for (int64_t k = 0; k < n; k++) {                                                                           \
        T* sk = s + k * d; const T* Ak = Ar + k * d; T bk = Bt[k], ck = Ct[k];                                    \
        _Pragma("omp simd")                                                                                       \
        for (int64_t i = 0; i < d; i++) sk[i] = EXP(dt[i] * Ak[i]) * sk[i] + u[i] * bk;                           \
        if (y) {                                                                                                  \
          T* yt = y + o;                                                                                          \
          _Pragma("omp simd")                                                                                     \
          for (int64_t i = 0; i < d; i++) yt[i] += ck * sk[i];                                                    \
        }                                                                                                         \
      }                                                                                                           \
      for (int64_t j = 0; j < m; j++) if (at[r * m + j] == t) memcpy(hat + (r * m + j) * n * d, s, sizeof(T) * n * d); \
    }                                                                                                             \
  }                                                                                                               \
  free(u);                                                                                                        \
}                                                                                                                 \
void ssm_scan_bwd_##SFX(int64_t b0, int64_t b1, int64_t l, int64_t d, int64_t n, const T* delta, const T* At,    \
                        int a_rows, const T* B, const T* C, const T* x, const T* s0, const T* gy,                \
                        const T* g_last, T* gdelta, T* gAt, T* gB, T* gC, T* gx, T* gs0) {                        \
  T* g = malloc(sizeof(T) * (n * d + 4 * d + 2 * l * n * d));  /* g: dL/ds_{t}, carried backwards as exp(dt A) dL/ds_t */ \
  T *u = g + n * d, *gu = u + d, *gz = gu + d, *gk = gz + d, *hs = gk + d, *ea = hs + l * n * d;  /* hs, ea: this row's states and decays (l, n, d) */  \
  for (int64_t r = b0; r < b1; r++) {                                                                             \
    const T* Ar = a_rows ? At + r * n * d : At; T* gAr = gAt ? gAt + r * n * d : NULL;                            \
    for (int64_t t = 0; t < l; t++) {                              /* the row's states, recomputed */             \
      int64_t o = (r * l + t) * d;                                                                                \
      const T *dt = delta + o, *xt = x + o, *Bt = B + (r * l + t) * n;                                            \
      const T* sp = t > 0 ? hs + (t - 1) * n * d : (s0 ? s0 + r * n * d : NULL);                                 \
      _Pragma("omp simd")                                                                                         \
      for (int64_t i = 0; i < d; i++) u[i] = dt[i] * xt[i];                                                       \
      for (int64_t k = 0; k < n; k++) {                                                                           \
        T* sk = hs + (t * n + k) * d; const T* Ak = Ar + k * d; T bk = Bt[k];                                     \
        if (sp) {                                                                                                 \
          const T* pk = sp + k * d;                                                                               \
          _Pragma("omp simd")                                                                                     \
          for (int64_t i = 0; i < d; i++) { T a = EXP(dt[i] * Ak[i]); ea[(t * n + k) * d + i] = a; sk[i] = a * pk[i] + u[i] * bk; } \
        } else {                                                                                                  \
          _Pragma("omp simd")                                                                                     \
          for (int64_t i = 0; i < d; i++) { ea[(t * n + k) * d + i] = EXP(dt[i] * Ak[i]); sk[i] = u[i] * bk; }     \
        }                                                                                                         \
      }                                                                                                           \
    }                                                                                                             \
    if (g_last) memcpy(g, g_last + r * n * d, sizeof(T) * n * d); else memset(g, 0, sizeof(T) * n * d);          \
    if (gAr) memset(gAr, 0, sizeof(T) * n * d);                                                                   \
    for (int64_t t = l - 1; t >= 0; t--) {                                                                        \
      int64_t o = (r * l + t) * d;                                                                                \
      const T *dt = delta + o, *xt = x + o, *gyt = gy + o, *Bt = B + (r * l + t) * n, *Ct = C + (r * l + t) * n; \
      const T* st = hs + t * n * d;                                                                               \
      const T* sp = t > 0 ? hs + (t - 1) * n * d : (s0 ? s0 + r * n * d : NULL);                                 \
      _Pragma("omp simd")                                                                                         \
      for (int64_t i = 0; i < d; i++) { u[i] = dt[i] * xt[i]; gu[i] = 0; gz[i] = 0; }                             \
      for (int64_t k = 0; k < n; k++) {                                                                           \
        T *gkk = g + k * d, bk = Bt[k], ck = Ct[k], sc = 0, sb = 0; const T *Ak = Ar + k * d, *sk = st + k * d; \
        _Pragma("omp simd reduction(+:sc,sb)")                                                                    \
        for (int64_t i = 0; i < d; i++) {                                                                         \
          T q = gyt[i] * ck + gkk[i];                                                                             \
          sc += sk[i] * gyt[i]; sb += q * u[i]; gu[i] += q * bk; gk[i] = q;                                       \
        }                                                                                                         \
        gC[(r * l + t) * n + k] = sc; gB[(r * l + t) * n + k] = sb;                                               \
        if (!sp) {                                /* s_{-1} = 0: the decay has no gradient */                    \
          _Pragma("omp simd")                                                                                     \
          for (int64_t i = 0; i < d; i++) gkk[i] = ea[(t * n + k) * d + i] * gk[i];                                    \
        } else if (gAr) {                                                                                         \
          const T* pk = sp + k * d; T* gAk = gAr + k * d;                                                         \
          _Pragma("omp simd")                                                                                     \
          for (int64_t i = 0; i < d; i++) {                                                                       \
            T a = ea[(t * n + k) * d + i], z = gk[i] * pk[i] * a;                                                      \
            gz[i] += z * Ak[i]; gAk[i] += z * dt[i]; gkk[i] = a * gk[i];                                          \
          }                                                                                                       \
        } else {                                                                                                  \
          const T* pk = sp + k * d;                                                                               \
          _Pragma("omp simd")                                                                                     \
          for (int64_t i = 0; i < d; i++) {                                                                       \
            T a = ea[(t * n + k) * d + i], z = gk[i] * pk[i] * a;                                                      \
            gz[i] += z * Ak[i]; gkk[i] = a * gk[i];                                                               \
          }                                                                                                       \
        }                                                                                                         \
      }                                                                                                           \
      _Pragma("omp simd")                                                                                         \
      for (int64_t i = 0; i < d; i++) { gdelta[o + i] = gz[i] + gu[i] * xt[i]; gx[o + i] = gu[i] * dt[i]; }      \
    }                                                                                                             \
    if (gs0) memcpy(gs0 + r * n * d, g, sizeof(T) * n * d);                                                       \
  }                                                                                                               \
  free(g);                                                                                                        \
}
SCAN(float, expf, f32)
SCAN(double, exp, f64)
