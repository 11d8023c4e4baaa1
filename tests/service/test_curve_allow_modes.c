/*
 * test_curve_allow_modes.c - an allow-list (security.curve_allow) that group
 * or others may write is refused like a loose secret key (issue 26): a
 * directory at 0777 or 0775, a file at 0666 or 0664, each refused with
 * CURVE_KEY_EPERM and a message naming the path, the mode and the chmod;
 * 0755 / 0644 load the one key. A loose file in a tight directory is named.
 *
 *   test_curve_allow_modes TMPDIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "curve_keys.h"
#include "test_check.h"

/* Loads path; checks the code and, for a refusal, the message's start. */
static void expect(const char *path, const char *named, curve_key_error want, const char *mode_text,
                   const char *what)
{
    curve_allow_list list;
    char err[1024];
    curve_key_error e = curve_allow_list_load(path, &list, err, sizeof err);
    if (want == CURVE_KEY_OK) {
        CHECK(e == CURVE_KEY_OK && list.count == 1, "%s: code %d (%s), %zu keys; want 1 key", path, e,
              e == CURVE_KEY_OK ? "" : err, e == CURVE_KEY_OK ? list.count : 0);
        if (e == CURVE_KEY_OK)
            curve_allow_list_free(&list);
        return;
    }
    char message[1024];
    snprintf(message, sizeof message, "%s: mode %s lets group or others write the allow-list %s", named, mode_text,
             what);
    CHECK(e == CURVE_KEY_EPERM && strncmp(err, message, strlen(message)) == 0, "%s: code %d \"%s\", want \"%s...\"",
          path, e, err, message);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_curve_allow_modes TMPDIR\n");
        return 2;
    }
    char dir[512], base[600], key[640], secret[640];
    snprintf(dir, sizeof dir, "%s/curve-allow-XXXXXX", argv[1]);
    if (mkdtemp(dir) == NULL || !zmq_has("curve")) {
        fprintf(stderr, "test_curve_allow_modes: %s\n", zmq_has("curve") ? "mkdtemp failed" : "libzmq without CURVE");
        return 1;
    }
    snprintf(base, sizeof base, "%s/client", dir);
    snprintf(key, sizeof key, "%s.key", base);
    snprintf(secret, sizeof secret, "%s.key_secret", base);
    curve_key_pair pair;
    char err[512];
    CHECK(curve_key_pair_write(base, &pair, err, sizeof err) == CURVE_KEY_OK, "keygen: %s", err);
    unlink(secret); /* a directory allow-list reads *.key only; keep just the public key */

    chmod(dir, 0755);
    chmod(key, 0644);
    expect(dir, dir, CURVE_KEY_OK, NULL, NULL);
    expect(key, key, CURVE_KEY_OK, NULL, NULL);
    chmod(dir, 0777);
    expect(dir, dir, CURVE_KEY_EPERM, "0777", "directory");
    chmod(dir, 0775);
    expect(dir, dir, CURVE_KEY_EPERM, "0775", "directory");
    chmod(dir, 0755);
    chmod(key, 0666);
    expect(key, key, CURVE_KEY_EPERM, "0666", "file");
    expect(dir, key, CURVE_KEY_EPERM, "0666", "file"); /* a loose file inside a tight directory */
    chmod(key, 0664);
    expect(key, key, CURVE_KEY_EPERM, "0664", "file");

    unlink(key);
    rmdir(dir);
    return test_check_report("test_curve_allow_modes");
}
