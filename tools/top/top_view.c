/*
 * top_view.c - eigstream-top's screen (contract in top_view.h). One line per
 * topic, top to bottom; lines past the terminal's height are left out and
 * every line is cut at its width, so any size works.
 */
#include "top_view.h"

#include <curses.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { PAIR_ALERT = 1, PAIR_WARN, PAIR_TITLE };

static int view_open;

int top_view_open(void)
{
    if (newterm(NULL, stdout, stdin) == NULL)
        return -1;
    view_open = 1;
    cbreak();
    noecho();
    nodelay(stdscr, TRUE);
    keypad(stdscr, TRUE);
    curs_set(0);
    if (has_colors()) {
        start_color();
        use_default_colors();
        init_pair(PAIR_ALERT, COLOR_RED, -1);
        init_pair(PAIR_WARN, COLOR_YELLOW, -1);
        init_pair(PAIR_TITLE, COLOR_CYAN, -1);
    }
    return 0;
}

void top_view_close(void)
{
    if (view_open)
        endwin();
    view_open = 0;
}

int top_view_key(void)
{
    int key = getch();
    return key == ERR ? -1 : key;
}

/* Prints one line at *row (then moves on) in attr. Text wider than the
 * terminal wraps, at a space where there is one, onto indented
 * continuation rows: nothing is cut off on an 80-column terminal. */
static void line(int *row, attr_t attr, const char *format, ...) __attribute__((format(printf, 3, 4)));

static void line(int *row, attr_t attr, const char *format, ...)
{
    if (*row >= LINES)
        return;
    char text[512];
    va_list ap;
    va_start(ap, format);
    vsnprintf(text, sizeof text, format, ap);
    va_end(ap);
    attron(attr);
    const char *rest = text;
    int indent = 0;
    do {
        size_t width = COLS > indent + 1 ? (size_t)(COLS - indent) : 1, take = strlen(rest);
        if (take > width) {
            take = width;
            while (take > width / 2 && rest[take] != ' ')
                take--; /* back to a space, unless that leaves most of the row empty */
            if (rest[take] != ' ')
                take = width;
        }
        mvaddnstr(*row, indent, rest, (int)take);
        (*row)++;
        rest += take;
        while (*rest == ' ')
            rest++;
        indent = 2;
    } while (*rest != '\0' && *row < LINES);
    attroff(attr);
}

static attr_t color(int pair)
{
    return has_colors() ? COLOR_PAIR(pair) : A_BOLD;
}

static double ms(double us)
{
    return us / 1e3;
}

static void draw_header(int *row, const top_view_state *v, const top_snapshot *s)
{
    unsigned long long up = (unsigned long long)s->uptime_s;
    line(row, color(PAIR_TITLE) | A_BOLD, "eigstream-top  %s  up %llu:%02llu:%02llu%s", v->endpoint, up / 3600,
         up / 60 % 60, up % 60, v->paused ? "  [PAUSED]" : "");
    line(row, A_NORMAL, "backend %s  precision %s  mode %s  n %lld  matrices %lld", s->backend, s->precision,
         s->mode, (long long)s->n, (long long)s->matrices);
    const top_frames *f = &s->frames;
    line(row, A_NORMAL, "frames/s  in %.1f  out %.1f  rejected %.1f", s->in_per_s, s->out_per_s,
         s->rejected_per_s);
    line(row, A_NORMAL, "frames    in %llu  out %llu  late %llu  in flight %llu  matrices failed %llu",
         (unsigned long long)f->in, (unsigned long long)f->out, (unsigned long long)f->late,
         (unsigned long long)f->in_flight, (unsigned long long)f->matrices_failed);
}

static void draw_latency(int *row, const top_view_state *v, const top_snapshot *s)
{
    const top_latency *e = &s->latency[METRICS_STAGE_END_TO_END];
    int over = top_over_deadline(e->p99_us, v->deadline_ms) || top_over_deadline(e->max_us, v->deadline_ms);
    char deadline[48] = "no deadline given";
    if (v->deadline_ms > 0)
        snprintf(deadline, sizeof deadline, "deadline %.1f ms", v->deadline_ms);
    (*row)++;
    line(row, over ? color(PAIR_ALERT) | A_BOLD : A_BOLD, "end to end  p50 %.3f  p99 %.3f  max %.3f ms  (%s)",
         ms(e->p50_us), ms(e->p99_us), ms(e->max_us), deadline);
    line(row, A_NORMAL, "            last interval p99 %.3f ms", ms(v->interval_p99_us));
    line(row, A_UNDERLINE, "%-10s %12s %12s %10s", "stage", "mean ms", "p99 ms", "count");
    for (int stage = 0; stage < METRICS_STAGE_END_TO_END; stage++) {
        const top_latency *l = &s->latency[stage];
        line(row, top_over_deadline(l->p99_us, v->deadline_ms) ? color(PAIR_ALERT) : A_NORMAL,
             "%-10s %12.3f %12.3f %10llu", metrics_stage_name((metrics_stage)stage), ms(l->mean_us), ms(l->p99_us),
             (unsigned long long)l->count);
    }
}

/* "title a 1  b 2 ..." of the reasons, non-zero ones only when nonzero_only. */
static void draw_reasons(int *row, const char *title, const top_reason *r, size_t n, int nonzero_only)
{
    char text[512];
    size_t len = (size_t)snprintf(text, sizeof text, "%-9s", title);
    int any = 0;
    for (size_t i = 0; i < n && len < sizeof text; i++) {
        if (nonzero_only && r[i].count == 0)
            continue;
        len += (size_t)snprintf(text + len, sizeof text - len, " %s %llu ", r[i].name, (unsigned long long)r[i].count);
        any |= r[i].count != 0;
    }
    if (nonzero_only && !any && len < sizeof text)
        snprintf(text + len, sizeof text - len, " none");
    line(row, any ? color(PAIR_WARN) : A_NORMAL, "%s", text);
}

static void draw_queues(int *row, const top_snapshot *s)
{
    const top_queues *q = &s->queues;
    int full = q->capacity > 0 && (q->form >= q->capacity || q->solve >= q->capacity || q->publish >= q->capacity);
    (*row)++;
    line(row, full ? color(PAIR_WARN) : A_NORMAL, "queues    form %llu/%llu  solve %llu/%llu  publish %llu/%llu",
         (unsigned long long)q->form, (unsigned long long)q->capacity, (unsigned long long)q->solve,
         (unsigned long long)q->capacity, (unsigned long long)q->publish, (unsigned long long)q->capacity);
    line(row, A_NORMAL, "buffers   frames free %llu/%llu  outputs free %llu/%llu",
         (unsigned long long)q->frames_free, (unsigned long long)q->frames_total,
         (unsigned long long)q->outputs_free, (unsigned long long)q->outputs_total);
    draw_reasons(row, "dropped", s->dropped, s->dropped_count, 0);
    draw_reasons(row, "rejected", s->rejected, s->rejected_count, 1);
}

static void draw_sparkline(int *row, const top_view_state *v)
{
    double top = top_history_max(v->p99);
    if (v->deadline_ms > 0 && !(top >= v->deadline_ms * 1e3))
        top = isfinite(top) ? top : v->deadline_ms * 1e3;
    char spark[4 * TOP_HISTORY_MAX + 1];
    size_t width = COLS > 2 ? (size_t)COLS - 2 : 1;
    top_sparkline(v->p99, width, top, v->ascii, spark, sizeof spark);
    (*row)++;
    line(row, A_NORMAL, "end-to-end p99 per document, last minute (top %.3f ms)", ms(top));
    if (*row < LINES)
        mvaddstr((*row)++, 0, spark);
}

void top_view_draw(const top_view_state *v)
{
    erase();
    int row = 0;
    if (v->snapshot == NULL)
        line(&row, A_BOLD, "eigstream-top  %s  waiting for a metrics document (%.0f s)", v->endpoint, v->silent_s);
    else {
        draw_header(&row, v, v->snapshot);
        draw_latency(&row, v, v->snapshot);
        draw_queues(&row, v->snapshot);
        draw_sparkline(&row, v);
    }
    row++;
    if (v->snapshot != NULL && v->silent_s > v->stale_s)
        line(&row, color(PAIR_ALERT) | A_BOLD, "no document for %.0f s: is the daemon running?", v->silent_s);
    if (v->problem != NULL)
        line(&row, color(PAIR_ALERT), "bad document: %s", v->problem);
    line(&row, A_DIM, "q quit  p %s", v->paused ? "resume" : "pause");
    refresh();
}
