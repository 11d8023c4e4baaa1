/*
 * test_curve_keys.c - unit tests of pipeline/protocol/curve_keys.c (label unit).
 *
 *   test_curve_keys TMPDIR
 *
 * Oracles: libzmq's own Z85 codec and key derivation (zmq_curve_keypair,
 * zmq_curve_public, zmq_z85_decode), and stat(2) for the modes.
 * - a written pair reads back, the public key derives from the secret one,
 *   modes 0644 / 0600, a second write refuses and changes nothing;
 * - a secret file with group or other bits is refused with its mode and fix,
 *   a public file is refused where a secret one is needed, a mismatched pair
 *   is refused;
 * - allow-lists: bare keys, public-key
 *   lines, comments ('#' is a Z85 digit, never a key's first one), a
 *   directory of *.key files; a secret key line, a
 *   malformed line and an empty list are refused naming the file and line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zmq.h>

#include "curve_keys.h"
#include "test_check.h"

static const char *dir;

static const char *path_in(const char *name)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

static void write_text(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    if (f == NULL)
        return;
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
}

static void test_pair(void)
{
    curve_key_pair written, read;
    char err[512];
    const char *base = path_in("pair");
    CHECK(curve_key_pair_write(base, &written, err, sizeof err) == CURVE_KEY_OK, "write: %s", err);
    char derived[41];
    CHECK(zmq_curve_public(derived, written.secret_key) == 0 && strcmp(derived, written.public_key) == 0,
          "libzmq derives %s from the secret key, the file says %s", derived, written.public_key);
    char public_path[512], secret_path[512];
    snprintf(public_path, sizeof public_path, "%s.key", base);
    snprintf(secret_path, sizeof secret_path, "%s.key_secret", base);
    struct stat st;
    CHECK(stat(public_path, &st) == 0 && (st.st_mode & 07777) == 0644, "public mode %o", st.st_mode & 07777);
    CHECK(stat(secret_path, &st) == 0 && (st.st_mode & 07777) == 0600, "secret mode %o", st.st_mode & 07777);
    CHECK(curve_key_file_read(secret_path, 1, &read, err, sizeof err) == CURVE_KEY_OK, "read secret: %s", err);
    CHECK(strcmp(read.public_key, written.public_key) == 0 && strcmp(read.secret_key, written.secret_key) == 0,
          "secret file reads back another pair");
    CHECK(curve_key_file_read(public_path, 0, &read, err, sizeof err) == CURVE_KEY_OK &&
              strcmp(read.public_key, written.public_key) == 0 && read.secret_key[0] == '\0',
          "public file: %s", err);
    CHECK(curve_key_file_read(public_path, 1, &read, err, sizeof err) != CURVE_KEY_OK,
          "a public file accepted as a secret one");

    curve_key_pair again;
    CHECK(curve_key_pair_write(base, &again, err, sizeof err) == CURVE_KEY_EEXIST, "second write not refused");
    CHECK(curve_key_file_read(secret_path, 1, &read, err, sizeof err) == CURVE_KEY_OK &&
              strcmp(read.secret_key, written.secret_key) == 0,
          "second write changed the secret file");

    chmod(secret_path, 0640);
    CHECK(curve_key_file_read(secret_path, 1, &read, err, sizeof err) == CURVE_KEY_EPERM, "mode 0640 accepted");
    CHECK(strstr(err, "mode 0640 lets group or others at the secret key: refused (chmod 600 ") != NULL,
          "mode message: %s", err);
    chmod(secret_path, 0604);
    CHECK(curve_key_file_read(secret_path, 1, &read, err, sizeof err) == CURVE_KEY_EPERM, "mode 0604 accepted");
}

static void test_mismatch(void)
{
    char public_a[41], secret_a[41], public_b[41], secret_b[41], text[512], err[512];
    zmq_curve_keypair(public_a, secret_a);
    zmq_curve_keypair(public_b, secret_b);
    snprintf(text, sizeof text, "curve\n    public-key = \"%s\"\n    secret-key = \"%s\"\n", public_b, secret_a);
    const char *path = path_in("mismatch.key_secret");
    write_text(path, text, 0600);
    curve_key_pair read;
    CHECK(curve_key_file_read(path, 1, &read, err, sizeof err) == CURVE_KEY_EFORMAT &&
              strstr(err, "public-key is not the secret key's") != NULL,
          "mismatched pair: %s", err);
}

static void test_allow_file(void)
{
    char a[41], b[41], secret[41], text[1024], err[512];
    uint8_t ab[32], bb[32], other[32];
    zmq_curve_keypair(a, secret);
    zmq_curve_keypair(b, secret);
    zmq_z85_decode(ab, a);
    zmq_z85_decode(bb, b);
    memset(other, 7, sizeof other);
    snprintf(text, sizeof text, "# clients\n\n%s\n  public-key = \"%s\"  \n%s\n", a, b, a);
    const char *path = path_in("allow.txt");
    write_text(path, text, 0644);
    curve_allow_list list;
    CHECK(curve_allow_list_load(path, &list, err, sizeof err) == CURVE_KEY_OK, "allow file: %s", err);
    CHECK(list.count == 2, "%zu keys, want 2 (one listed twice)", list.count);
    CHECK(curve_allow_list_contains(&list, ab) && curve_allow_list_contains(&list, bb), "a listed key is missing");
    CHECK(!curve_allow_list_contains(&list, other), "an unlisted key is let in");
    curve_allow_list_free(&list);

    const struct {
        const char *name, *text, *want;
    } bad[] = {
        {"secret.txt", "secret-key = \"0000000000000000000000000000000000000000\"\n",
         ":1: a secret key in an allow-list"},
        {"short.txt", "# one\nabc\n", ":2: not a 40-character Z85 key"},
        {"garbage.txt", "public-key \"x\"\n", ":1: not a key line"},
        {"empty.txt", "# nobody\n", ": no client key (nobody could connect)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *p = path_in(bad[i].name);
        write_text(p, bad[i].text, 0644);
        char want[600];
        snprintf(want, sizeof want, "%s%s", p, bad[i].want);
        CHECK(curve_allow_list_load(p, &list, err, sizeof err) != CURVE_KEY_OK && strncmp(err, want, strlen(want)) == 0,
              "%s: \"%s\", want \"%s...\"", bad[i].name, err, want);
    }
}

static void test_allow_directory(void)
{
    char err[512];
    const char *d = path_in("clients");
    mkdir(d, 0755);
    curve_key_pair one, two;
    char base[600];
    snprintf(base, sizeof base, "%s/one", d);
    curve_key_pair_write(base, &one, err, sizeof err);
    snprintf(base, sizeof base, "%s/two", d);
    curve_key_pair_write(base, &two, err, sizeof err);
    curve_allow_list list;
    CHECK(curve_allow_list_load(d, &list, err, sizeof err) == CURVE_KEY_OK, "allow directory: %s", err);
    uint8_t k1[32], k2[32];
    zmq_z85_decode(k1, one.public_key);
    zmq_z85_decode(k2, two.public_key);
    CHECK(list.count == 2 && curve_allow_list_contains(&list, k1) && curve_allow_list_contains(&list, k2),
          "directory: %zu keys", list.count);
    curve_allow_list_free(&list);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_curve_keys TMPDIR\n");
        return 2;
    }
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/curve-keys-XXXXXX", argv[1]);
    dir = mkdtemp(tmpl);
    if (dir == NULL || !zmq_has("curve")) {
        fprintf(stderr, "test_curve_keys: %s\n", dir == NULL ? "mkdtemp failed" : "libzmq without CURVE");
        return 1;
    }
    test_pair();
    test_mismatch();
    test_allow_file();
    test_allow_directory();
    return test_check_report("test_curve_keys");
}
