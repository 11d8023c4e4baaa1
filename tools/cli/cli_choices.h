/*
 * cli_choices.h - option choice lists of the shared concepts, built from
 * each concept's one name table (eig.h: precision, backend; protocol.h:
 * storage, output mode), so that a tool's --precision, --storage, --mode
 * and --backend spell exactly what the config file and the logs do.
 *
 * Header-only (inline), so that a tool pulls in only the name tables it
 * uses: the precision and storage names need no library, the backend
 * names need eigstream_eig, the output mode, IQ format and layout names
 * eigstream_protocol.
 */
#ifndef EIGSTREAM_CLI_CHOICES_H
#define EIGSTREAM_CLI_CHOICES_H

#include "eig.h"
#include "protocol.h"

#define CLI_CHOICES_MAX 8

/* For CLI_CHOICE(name, short, &value, c.names, c.values, help). */
typedef struct cli_choices {
    const char *names[CLI_CHOICES_MAX + 1]; /* NULL-terminated */
    int values[CLI_CHOICES_MAX];
} cli_choices;

/* Defines static inline cli_choices function(void): the values first..last
 * (at most CLI_CHOICES_MAX) and the names name_of gives them (an expression
 * of the int v_). */
#define CLI_CHOICES_RANGE(function, first, last, name_of)                                          \
    static inline cli_choices function(void)                                                       \
    {                                                                                              \
        cli_choices c = {{NULL}, {0}};                                                             \
        for (int v_ = (first); v_ <= (last) && v_ - (first) < CLI_CHOICES_MAX; v_++) {             \
            c.names[v_ - (first)] = (name_of);                                                     \
            c.values[v_ - (first)] = v_;                                                           \
        }                                                                                          \
        return c;                                                                                  \
    }

/* double, float (double first: the default). */
static inline cli_choices cli_choices_precision(void)
{
    cli_choices c = {{eig_precision_name(EIG_COMPLEX_DOUBLE), eig_precision_name(EIG_COMPLEX_FLOAT), NULL},
                     {EIG_COMPLEX_DOUBLE, EIG_COMPLEX_FLOAT}};
    return c;
}

/* full, packed_lower, packed_upper. */
CLI_CHOICES_RANGE(cli_choices_storage, PROTOCOL_STORAGE_FULL, PROTOCOL_STORAGE_PACKED_UPPER,
                  protocol_storage_name((uint8_t)v_))

/* full, values, signal, noise (the output modes; not "none"). */
CLI_CHOICES_RANGE(cli_choices_mode, PROTOCOL_MODE_FULL, PROTOCOL_MODE_NOISE, protocol_mode_name((uint8_t)v_))

/* ci16_le, cf32_le (the IQ sample formats; ci16_le first: the default). */
static inline cli_choices cli_choices_iq_format(void)
{
    cli_choices c = {{protocol_iq_format_name(PROTOCOL_IQ_CI16_LE), protocol_iq_format_name(PROTOCOL_IQ_CF32_LE), NULL},
                     {PROTOCOL_IQ_CI16_LE, PROTOCOL_IQ_CF32_LE}};
    return c;
}

/* cpg, pcg, pgc (the IQ cube layouts). */
CLI_CHOICES_RANGE(cli_choices_iq_layout, PROTOCOL_IQ_CPG, PROTOCOL_IQ_PGC, protocol_iq_layout_name(v_))

/* auto, cpu, lapack, cuda (needs eigstream_eig). */
CLI_CHOICES_RANGE(cli_choices_backend, EIG_BACKEND_AUTO, EIG_BACKEND_CUDA, eig_backend_name((eig_backend)v_))

#endif
