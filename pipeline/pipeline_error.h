/*
 * pipeline_error.h - the engine's error values (pipeline.h and every stage,
 * path and helper of the engine return one), apart so that the frame
 * paths' CUDA sources can use them without the C-only headers pipeline.h
 * pulls in.
 */
#ifndef EIGSTREAM_PIPELINE_ERROR_H
#define EIGSTREAM_PIPELINE_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pipeline_error {
    PIPELINE_OK = 0,
    PIPELINE_EINVAL,  /* configuration the pipeline cannot run */
    PIPELINE_ENOMEM,
    PIPELINE_ESOCKET, /* a ZeroMQ socket could not be created, bound or connected */
    PIPELINE_ESOLVER, /* the solver plan could not be created, or a solve failed as a whole */
    PIPELINE_ETHREAD, /* a stage thread could not be started */
    PIPELINE_EDEVICE, /* a CUDA call of the frame path failed */
    PIPELINE_ELIMIT   /* a resource limit (RLIMIT_NOFILE) is below what the settings need */
} pipeline_error;

const char *pipeline_strerror(pipeline_error e);

#ifdef __cplusplus
}
#endif

#endif
