/*
 * pipeline_error.c - the pipeline's error values as text (pipeline_error.h).
 */
#include "pipeline_error.h"

const char *pipeline_strerror(pipeline_error e)
{
    switch (e) {
    case PIPELINE_OK: return "ok";
    case PIPELINE_EINVAL: return "configuration the pipeline cannot run";
    case PIPELINE_ENOMEM: return "out of memory";
    case PIPELINE_ESOCKET: return "socket error";
    case PIPELINE_ESOLVER: return "solver error";
    case PIPELINE_ETHREAD: return "thread could not be started";
    case PIPELINE_EDEVICE: return "CUDA error in the frame path";
    case PIPELINE_ELIMIT: return "a resource limit is below what the settings need";
    }
    return "unknown pipeline error";
}
