/*
 * eig_plan.c - the public API of eig.h: parameter defaults and validation,
 * backend resolution and dispatch, error strings and backend names.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>

#include "eig.h"
#include "eig_internal.h"

#ifdef EIGSTREAM_HAVE_CUDA
#include "eig_backend_cuda.h"
#endif

struct eig_plan {
    eig_plan_params params; /* as created, backend resolved */
    eig_cpu_plan *cpu;
    eig_lapack_plan *lapack;
#ifdef EIGSTREAM_HAVE_CUDA
    eig_cuda_plan *cuda;
#endif
};

/* eig.h's defaults; every field not named is 0 (threads: all online cores,
 * device 0, not device-only, the cuda plan's own tuning). */
eig_plan_params eig_plan_params_default(void)
{
    return (eig_plan_params){.n = 1,
                             .batch = 1,
                             .precision = EIG_COMPLEX_DOUBLE,
                             .job = EIG_JOB_VECTORS,
                             .storage = EIG_STORAGE_FULL,
                             .uplo = EIG_LOWER,
                             .backend = EIG_BACKEND_AUTO,
                             .cuda = {.qr_path = EIG_CUDA_QR_PATH_AUTO}};
}

int eig_cuda_built(void)
{
#ifdef EIGSTREAM_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

int eig_cuda_device_count(void)
{
#ifdef EIGSTREAM_HAVE_CUDA
    return eig_cuda_runtime_device_count();
#else
    return 0;
#endif
}

/* Ranges of every field; the batch must also be addressable in size_t. */
static eig_error eig_plan_params_validate(const eig_plan_params *p)
{
    if (p->n < 1 || p->n > EIG_N_MAX || p->batch < 1)
        return EIG_EINVAL;
    if (eig_element_bytes(p->precision) == 0 || (unsigned)p->job > EIG_JOB_VECTORS ||
        (unsigned)p->storage > EIG_STORAGE_PACKED || (unsigned)p->uplo > EIG_UPPER ||
        (unsigned)p->backend > EIG_BACKEND_CUDA)
        return EIG_EINVAL;
    if (p->threads < 0 || p->device < 0 || (unsigned)p->device_only > 1)
        return EIG_EINVAL;
    if ((unsigned)p->cuda.qr_path > EIG_CUDA_QR_PATH_WAVEFRONT ||
        (unsigned)p->cuda.back_path > EIG_CUDA_BACK_PATH_GEMM ||
        (unsigned)p->cuda.tridiag_path > EIG_CUDA_TRIDIAG_PATH_PANEL || p->cuda.qr_log_cap < 0 ||
        p->cuda.qr_log_cap > EIG_CUDA_TUNING_MAX || p->cuda.qr_group_min < 0 ||
        p->cuda.qr_group_min > EIG_CUDA_TUNING_MAX)
        return EIG_EINVAL;
    if (p->cuda.qr_bulges != 0 && p->cuda.qr_bulges != 8 && p->cuda.qr_bulges != 16 &&
        p->cuda.qr_bulges != 32)
        return EIG_EINVAL;
    /* bytes of the largest buffer (z, complex double) must fit in size_t */
    size_t per_matrix = (size_t)p->n * (size_t)p->n * 16;
    if ((size_t)p->batch > SIZE_MAX / per_matrix)
        return EIG_EINVAL;
    return EIG_OK;
}

eig_error eig_plan_create(eig_plan **out, const eig_plan_params *params)
{
    if (out == NULL)
        return EIG_EINVAL;
    *out = NULL;
    if (params == NULL)
        return EIG_EINVAL;
    eig_error e = eig_plan_params_validate(params);
    if (e != EIG_OK)
        return e;

    eig_plan_params p = *params;
    p.backend = eig_backend_resolve(p.backend, p.n);
    if (p.n > eig_backend_n_max(p.backend))
        return EIG_EUNSUPPORTED;
    /* only the cuda backend has a device entry point */
    if (p.device_only && p.backend != EIG_BACKEND_CUDA)
        return EIG_EUNSUPPORTED;
#ifndef EIGSTREAM_HAVE_CUDA
    if (p.backend == EIG_BACKEND_CUDA)
        return EIG_ENOCUDA;
#endif

    eig_plan *plan = calloc(1, sizeof(*plan));
    if (plan == NULL)
        return EIG_ENOMEM;
    plan->params = p;
    int threads = eig_threads_resolve(p.threads);
    switch (p.backend) {
    case EIG_BACKEND_CPU:
        e = eig_cpu_plan_create(&plan->cpu, &p, threads);
        break;
    case EIG_BACKEND_LAPACK:
        e = eig_lapack_plan_create(&plan->lapack, &p, threads);
        break;
#ifdef EIGSTREAM_HAVE_CUDA
    case EIG_BACKEND_CUDA:
        e = eig_cuda_plan_create(&plan->cuda, &p);
        break;
#endif
    default:
        e = EIG_EINVAL;
        break;
    }
    if (e != EIG_OK) {
        eig_plan_destroy(&plan);
        return e;
    }
    *out = plan;
    return EIG_OK;
}

eig_error eig_plan_execute(eig_plan *plan, const void *a, void *w, void *z, int *info)
{
    if (plan == NULL || a == NULL || w == NULL || info == NULL)
        return EIG_EINVAL;
    if (plan->params.job == EIG_JOB_VECTORS && z == NULL)
        return EIG_EINVAL;
    if (plan->params.job == EIG_JOB_VALUES)
        z = NULL;
    switch (plan->params.backend) {
    case EIG_BACKEND_CPU:
        return eig_cpu_plan_execute(plan->cpu, a, w, z, info);
    case EIG_BACKEND_LAPACK:
        return eig_lapack_plan_execute(plan->lapack, a, w, z, info);
#ifdef EIGSTREAM_HAVE_CUDA
    case EIG_BACKEND_CUDA:
        return eig_cuda_plan_execute(plan->cuda, a, w, z, info);
#endif
    default:
        return EIG_EINVAL;
    }
}

eig_error eig_plan_execute_device(eig_plan *plan, const void *d_a, void *d_w, void *d_z,
                                  int *d_info, void *stream)
{
    if (plan == NULL)
        return EIG_EINVAL;
    return eig_plan_execute_device_layout(plan, plan->params.storage, plan->params.uplo, d_a, d_w,
                                          d_z, d_info, stream);
}

eig_error eig_plan_execute_device_layout(eig_plan *plan, eig_storage storage, eig_uplo uplo,
                                         const void *d_a, void *d_w, void *d_z, int *d_info,
                                         void *stream)
{
    if (plan == NULL || (unsigned)storage > EIG_STORAGE_PACKED || (unsigned)uplo > EIG_UPPER)
        return EIG_EINVAL;
#ifdef EIGSTREAM_HAVE_CUDA
    if (plan->params.backend == EIG_BACKEND_CUDA) {
        if (d_a == NULL || d_w == NULL || d_info == NULL)
            return EIG_EINVAL;
        if (plan->params.job == EIG_JOB_VECTORS && d_z == NULL)
            return EIG_EINVAL;
        return eig_cuda_plan_execute_device(plan->cuda, storage, uplo, d_a, d_w, d_z, d_info,
                                            stream);
    }
#else
    (void)d_a;
    (void)d_w;
    (void)d_z;
    (void)d_info;
    (void)stream;
#endif
    return EIG_EUNSUPPORTED;
}

void eig_plan_destroy(eig_plan **plan)
{
    if (plan == NULL || *plan == NULL)
        return;
    eig_plan *p = *plan;
    eig_cpu_plan_destroy(p->cpu);
    eig_lapack_plan_destroy(p->lapack);
#ifdef EIGSTREAM_HAVE_CUDA
    if (p->cuda != NULL)
        eig_cuda_plan_destroy(p->cuda);
#endif
    free(p);
    *plan = NULL;
}

const eig_plan_params *eig_plan_get_params(const eig_plan *plan)
{
    return plan == NULL ? NULL : &plan->params;
}

const char *eig_strerror(eig_error e)
{
    switch (e) {
    case EIG_OK:
        return "success";
    case EIG_EINVAL:
        return "invalid argument";
    case EIG_ENOMEM:
        return "out of host memory";
    case EIG_EMATRIX:
        return "one or more matrices failed (see info)";
    case EIG_ENOCUDA:
        return "the cuda backend is not built in";
    case EIG_ENODEVICE:
        return "no usable CUDA device";
    case EIG_EDEVICE:
        return "a CUDA call failed";
    case EIG_EUNSUPPORTED:
        return "not supported by this backend";
    case EIG_EBACKEND:
        return "the backend library reported an error";
    }
    return "unknown eig error";
}

static const char *const eig_backend_names[] = {"auto", "cpu", "lapack", "cuda"};
static const char *const eig_cuda_qr_path_names[] = {"auto", "fused", "logged", "wavefront"};
static const char *const eig_cuda_back_path_names[] = {"auto", "slabs", "gemm"};
static const char *const eig_cuda_tridiag_path_names[] = {"auto", "sweep", "panel"};

eig_backend eig_backend_resolve(eig_backend b, int n)
{
    if (b != EIG_BACKEND_AUTO)
        return b;
    return n <= EIG_CUDA_N_MAX && eig_cuda_built() && eig_cuda_device_count() > 0 ? EIG_BACKEND_CUDA
                                                                                  : EIG_BACKEND_CPU;
}

int eig_backend_n_max(eig_backend b)
{
    switch (b) {
    case EIG_BACKEND_AUTO:
    case EIG_BACKEND_CPU:
    case EIG_BACKEND_LAPACK: return EIG_N_MAX;
    case EIG_BACKEND_CUDA: return EIG_CUDA_N_MAX;
    }
    return 0;
}

const char *eig_backend_name(eig_backend b)
{
    if ((unsigned)b > EIG_BACKEND_CUDA)
        return "unknown";
    return eig_backend_names[b];
}

/* Case-insensitive, so that "CPU" on a command line works. */
static int eig_name_equal(const char *a, const char *b)
{
    for (; *a != '\0' && *b != '\0'; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

const char *eig_cuda_qr_path_name(eig_cuda_qr_path path)
{
    if ((unsigned)path > EIG_CUDA_QR_PATH_WAVEFRONT)
        return "unknown";
    return eig_cuda_qr_path_names[path];
}

const char *eig_cuda_back_path_name(eig_cuda_back_path path)
{
    if ((unsigned)path > EIG_CUDA_BACK_PATH_GEMM)
        return "unknown";
    return eig_cuda_back_path_names[path];
}

const char *eig_cuda_tridiag_path_name(eig_cuda_tridiag_path path)
{
    if ((unsigned)path > EIG_CUDA_TRIDIAG_PATH_PANEL)
        return "unknown";
    return eig_cuda_tridiag_path_names[path];
}

/* eig_error function(const char *name, type *out): the value v in
 * [first, last] whose name_function(v) is name (case-insensitive) into *out;
 * EIG_EINVAL for a NULL argument or an unknown name (*out untouched). */
#define EIG_NAME_PARSER(function, type, name_function, first, last)                                  \
    eig_error function(const char *name, type *out)                                                  \
    {                                                                                                \
        if (name == NULL || out == NULL)                                                             \
            return EIG_EINVAL;                                                                       \
        for (int v = (first); v <= (last); v++) {                                                    \
            if (eig_name_equal(name, name_function((type)v))) {                                      \
                *out = (type)v;                                                                      \
                return EIG_OK;                                                                       \
            }                                                                                        \
        }                                                                                            \
        return EIG_EINVAL;                                                                           \
    }

EIG_NAME_PARSER(eig_precision_parse, eig_precision, eig_precision_name, EIG_COMPLEX_FLOAT, EIG_COMPLEX_DOUBLE)
EIG_NAME_PARSER(eig_backend_parse, eig_backend, eig_backend_name, EIG_BACKEND_AUTO, EIG_BACKEND_CUDA)
EIG_NAME_PARSER(eig_cuda_qr_path_parse, eig_cuda_qr_path, eig_cuda_qr_path_name, EIG_CUDA_QR_PATH_AUTO,
                EIG_CUDA_QR_PATH_WAVEFRONT)
EIG_NAME_PARSER(eig_cuda_back_path_parse, eig_cuda_back_path, eig_cuda_back_path_name,
                EIG_CUDA_BACK_PATH_AUTO, EIG_CUDA_BACK_PATH_GEMM)
EIG_NAME_PARSER(eig_cuda_tridiag_path_parse, eig_cuda_tridiag_path, eig_cuda_tridiag_path_name,
                EIG_CUDA_TRIDIAG_PATH_AUTO, EIG_CUDA_TRIDIAG_PATH_PANEL)
