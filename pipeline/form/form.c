/*
 * form.c - forming (unpack, forward-backward averaging, diagonal loading) on
 * the host: the CPU path of the form stage. See form.h.
 */
#include "form.h"

#include <complex.h>
#include <stddef.h>

#include "protocol.h"

#define FORM_COMPLEX float complex
#define FORM_REAL float
#define FORM_CONJ conjf
#define FORM_CREAL crealf
#define FORM_NAME(x) x##_c
#include "form.proto.c"

#define FORM_COMPLEX double complex
#define FORM_REAL double
#define FORM_CONJ conj
#define FORM_CREAL creal
#define FORM_NAME(x) x##_z
#include "form.proto.c"

void form_unpack_in_place(void *a, uint32_t n, uint32_t count, uint8_t element, uint8_t storage)
{
    int is_double = element == EIG_COMPLEX_DOUBLE;
    if (storage == PROTOCOL_STORAGE_PACKED_LOWER) {
        if (is_double)
            unpack_lower_z(a, n, count);
        else
            unpack_lower_c(a, n, count);
    } else if (storage == PROTOCOL_STORAGE_PACKED_UPPER) {
        if (is_double)
            unpack_upper_z(a, n, count);
        else
            unpack_upper_c(a, n, count);
    }
}

void form_forward_backward(void *a, uint32_t n, uint32_t count, uint8_t element)
{
    if (element == EIG_COMPLEX_DOUBLE)
        forward_backward_z(a, n, count);
    else
        forward_backward_c(a, n, count);
}

void form_diagonal_loading(void *a, uint32_t n, uint32_t count, uint8_t element, double factor)
{
    if (element == EIG_COMPLEX_DOUBLE)
        diagonal_loading_z(a, n, count, factor);
    else
        diagonal_loading_c(a, n, count, factor);
}
