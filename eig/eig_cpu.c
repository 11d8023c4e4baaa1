/* eig_cpu.c - placeholder until the cpu backend lands. */
#include "eig_internal.h"

eig_error eig_cpu_plan_create(eig_cpu_plan **out, const eig_plan_params *params, int threads)
{
    (void)params;
    (void)threads;
    *out = NULL;
    return EIG_EUNSUPPORTED;
}

eig_error eig_cpu_plan_execute(eig_cpu_plan *plan, const void *a, void *w, void *z, int *info)
{
    (void)plan;
    (void)a;
    (void)w;
    (void)z;
    (void)info;
    return EIG_EUNSUPPORTED;
}

void eig_cpu_plan_destroy(eig_cpu_plan *plan)
{
    (void)plan;
}
