/*
 * path_fault.h - fault injection for the pipeline tests, without a seam in
 * library code: test_pipeline_stream links with -Wl,--wrap=path_create, so
 * that the pipeline's path_create calls __wrap_path_create (path_fault.c).
 * Unarmed, it is path_create. Armed, the next path created is wrapped in a
 * test path (path_ops forwarding to the real one) that delays forming,
 * fails solves and corrupts their results as asked; the arming applies to that one path only, so a
 * solver.fallback path created later is the real host path.
 */
#ifndef EIGSTREAM_PATH_FAULT_H
#define EIGSTREAM_PATH_FAULT_H

typedef struct path_fault_spec {
    int form_delay_ms; /* each path_form sleeps this long first: a guaranteed delay after receipt */
    int failing_solves; /* the next this many path_solve calls fail as a whole (PIPELINE_ESOLVER) */
    int gated;          /* each path_form first waits until the test opens the path's gate */
    int corrupt_solves; /* the next this many successful path_solve calls return wrong eigenvalues
                           (each matrix's largest moved by 1 %): the self-check's alarm */
} path_fault_spec;

/* Arms the next path_create (not thread-safe: call before test_daemon_start). */
void path_fault_arm(const path_fault_spec *spec);
/* Arms the next `paths` path_create calls (several solver workers: worker
 * i's path is armed path i), each with spec; gates start closed. */
void path_fault_arm_paths(const path_fault_spec *spec, int paths);
/* Opens the gate of armed path i for good (any thread). */
void path_fault_open(int i);
/* Forms waiting at armed path i's gate now. */
int path_fault_waiting(int i);

#endif
