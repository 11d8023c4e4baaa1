/*
 * top_view.h - the ncurses screen of eigstream-top: draws what the model
 * (top_model.h) holds, fitted to the terminal's current size. Drawing only:
 * no parsing, no socket.
 */
#ifndef EIGSTREAM_TOP_VIEW_H
#define EIGSTREAM_TOP_VIEW_H

#include "top_model.h"

/* What one screen shows. */
typedef struct top_view_state {
    const char *endpoint;
    const top_snapshot *snapshot; /* NULL: no document yet */
    const top_history *p99;       /* the interval p99 of each document, us */
    double deadline_ms;           /* <= 0: none */
    double interval_p99_us;       /* of the latest document; NAN when unknown */
    double silent_s;              /* seconds since the last document (or since start) */
    double stale_s;               /* silent_s above this is flagged */
    const char *problem;          /* the last bad document's reason, or NULL */
    int paused, ascii;
} top_view_state;

/* Starts curses on the terminal (raw keys, no echo, no cursor, colours when
 * the terminal has them). Returns 0, or -1 when the terminal cannot be
 * used (not a terminal, unknown TERM). */
int top_view_open(void);

/* Redraws the whole screen from v. */
void top_view_draw(const top_view_state *v);

/* The next key pressed, or -1 when none is waiting (never blocks). A
 * terminal resize comes as a key the caller only needs to redraw after. */
int top_view_key(void);

/* Gives the terminal back. Safe after a failed or no top_view_open. */
void top_view_close(void);

#endif
