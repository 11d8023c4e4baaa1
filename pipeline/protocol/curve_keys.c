/*
 * curve_keys.c - CURVE key files (curve_keys.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "curve_keys.h"

#include "error_text.h"

#define KEY_LINE_MAX 512

const char *curve_key_strerror(curve_key_error e)
{
    switch (e) {
    case CURVE_KEY_OK: return "ok";
    case CURVE_KEY_EIO: return "cannot read or write the key file";
    case CURVE_KEY_EPERM: return "secret key file readable by others";
    case CURVE_KEY_EFORMAT: return "not a CURVE key file";
    case CURVE_KEY_EEXIST: return "key file exists";
    case CURVE_KEY_ENOCURVE: return "libzmq built without CURVE";
    case CURVE_KEY_ENOMEM: return "out of memory";
    }
    return "unknown key file error";
}

/* A Z85 key of 40 characters that decodes; 1 when valid (binary into out
 * when out is not NULL). */
static int z85_key_valid(const char *text, uint8_t *out)
{
    uint8_t bytes[CURVE_KEY_BYTES];
    if (strlen(text) != CURVE_KEY_Z85_LENGTH || zmq_z85_decode(bytes, text) == NULL)
        return 0;
    if (out != NULL)
        memcpy(out, bytes, sizeof bytes);
    return 1;
}

/* One line of a key file: *name <- "public-key" / "secret-key" / "" (a bare
 * key) / NULL (nothing: comment, blank, section word); *value <- the key
 * text (in line, quotes removed). -1 when the line is none of these. */
static int key_line_parse(char *line, const char **name, char **value)
{
    line[strcspn(line, "\r\n")] = '\0';
    char *p = line + strspn(line, " \t");
    size_t end = strlen(p);
    while (end > 0 && (p[end - 1] == ' ' || p[end - 1] == '\t'))
        p[--end] = '\0';
    *name = NULL;
    /* '#' is a Z85 digit, but never the first of a key: 4 bytes < 85^4 * 83. */
    if (*p == '\0' || *p == '#' || strcmp(p, "metadata") == 0 || strcmp(p, "curve") == 0)
        return 0;
    const char *names[] = {"public-key", "secret-key"};
    for (int i = 0; i < 2; i++) {
        size_t len = strlen(names[i]);
        if (strncmp(p, names[i], len) != 0)
            continue;
        p += len;
        p += strspn(p, " \t");
        if (*p++ != '=')
            return -1;
        p += strspn(p, " \t");
        if (*p++ != '"')
            return -1;
        char *end = strchr(p, '"');
        if (end == NULL || end[1 + strspn(end + 1, " \t")] != '\0')
            return -1;
        *end = '\0';
        *name = names[i];
        *value = p;
        return 0;
    }
    *name = "";
    *value = p; /* not a valid key: the caller names the line */
    return 0;
}

/* A secret file: regular, no group/other permission bits. */
static curve_key_error secret_mode_check(const char *path, int fd, char *err, size_t err_bytes)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return ERROR_TEXT_FAIL(CURVE_KEY_EIO, err, err_bytes, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return ERROR_TEXT_FAIL(CURVE_KEY_EFORMAT, err, err_bytes, "%s: not a regular file", path);
    if (st.st_mode & 077)
        return ERROR_TEXT_FAIL(CURVE_KEY_EPERM, err, err_bytes,
                        "%s: mode %04o lets group or others at the secret key: refused (chmod 600 %s)", path,
                        (unsigned)(st.st_mode & 07777), path);
    return CURVE_KEY_OK;
}

/* The public-key and secret-key lines of an open file into *out. */
static curve_key_error key_file_parse(const char *path, FILE *file, curve_key_pair *out, char *err,
                                      size_t err_bytes)
{
    char line[KEY_LINE_MAX];
    unsigned number = 0;
    memset(out, 0, sizeof *out);
    while (fgets(line, sizeof line, file) != NULL) {
        const char *name;
        char *value;
        number++;
        if (key_line_parse(line, &name, &value) != 0 || (name != NULL && name[0] == '\0'))
            return ERROR_TEXT_FAIL(CURVE_KEY_EFORMAT, err, err_bytes,
                            "%s:%u: expected public-key = \"...\" or secret-key = \"...\"", path, number);
        if (name == NULL)
            continue;
        if (!z85_key_valid(value, NULL))
            return ERROR_TEXT_FAIL(CURVE_KEY_EFORMAT, err, err_bytes, "%s:%u: %s is not a 40-character Z85 key", path,
                            number, name);
        strcpy(name[0] == 'p' ? out->public_key : out->secret_key, value);
    }
    if (ferror(file))
        return ERROR_TEXT_FAIL(CURVE_KEY_EIO, err, err_bytes, "%s: %s", path, strerror(errno));
    if (out->public_key[0] == '\0')
        return ERROR_TEXT_FAIL(CURVE_KEY_EFORMAT, err, err_bytes, "%s: no public-key line", path);
    return CURVE_KEY_OK;
}

curve_key_error curve_key_file_read(const char *path, int need_secret, curve_key_pair *out, char *err,
                                    size_t err_bytes)
{
    if (!zmq_has("curve"))
        return ERROR_TEXT_FAIL(CURVE_KEY_ENOCURVE, err, err_bytes, "this libzmq has no CURVE support");
    FILE *file = fopen(path, "r");
    if (file == NULL)
        return ERROR_TEXT_FAIL(CURVE_KEY_EIO, err, err_bytes, "%s: %s", path, strerror(errno));
    curve_key_error e = need_secret ? secret_mode_check(path, fileno(file), err, err_bytes) : CURVE_KEY_OK;
    if (e == CURVE_KEY_OK)
        e = key_file_parse(path, file, out, err, err_bytes);
    fclose(file);
    if (e == CURVE_KEY_OK && need_secret && out->secret_key[0] == '\0')
        e = ERROR_TEXT_FAIL(CURVE_KEY_EFORMAT, err, err_bytes, "%s: no secret-key line (a NAME.key_secret file?)", path);
    if (e == CURVE_KEY_OK && need_secret) {
        /* The pair must match: the public key derived from the secret one. */
        char derived[CURVE_KEY_Z85_LENGTH + 1];
        if (zmq_curve_public(derived, out->secret_key) != 0 || strcmp(derived, out->public_key) != 0)
            e = ERROR_TEXT_FAIL(CURVE_KEY_EFORMAT, err, err_bytes, "%s: public-key is not the secret key's", path);
    }
    return e;
}

/* ---- writing a pair ------------------------------------------------------------- */

/* Writes text to a new file (O_EXCL) with mode; 0 or -1 with errno. */
static int write_new_file(const char *path, mode_t mode, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0)
        return -1;
    size_t len = strlen(text);
    /* fchmod: the umask may have taken bits the mode asks for (0644). */
    int ok = fchmod(fd, mode) == 0 && write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
    int saved = errno;
    if (close(fd) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (!ok) {
        unlink(path);
        errno = saved;
        return -1;
    }
    return 0;
}

curve_key_error curve_key_pair_write(const char *base, curve_key_pair *out, char *err, size_t err_bytes)
{
    if (!zmq_has("curve"))
        return ERROR_TEXT_FAIL(CURVE_KEY_ENOCURVE, err, err_bytes, "this libzmq has no CURVE support");
    char public_path[4096], secret_path[4096];
    if ((size_t)snprintf(public_path, sizeof public_path, "%s.key", base) >= sizeof public_path ||
        (size_t)snprintf(secret_path, sizeof secret_path, "%s.key_secret", base) >= sizeof secret_path)
        return ERROR_TEXT_FAIL(CURVE_KEY_EIO, err, err_bytes, "%s: name too long", base);
    struct stat st;
    if (lstat(public_path, &st) == 0 || lstat(secret_path, &st) == 0)
        return ERROR_TEXT_FAIL(CURVE_KEY_EEXIST, err, err_bytes, "%s exists: refusing to overwrite a key",
                        lstat(public_path, &st) == 0 ? public_path : secret_path);
    if (zmq_curve_keypair(out->public_key, out->secret_key) != 0)
        return ERROR_TEXT_FAIL(CURVE_KEY_ENOCURVE, err, err_bytes, "zmq_curve_keypair: %s", zmq_strerror(errno));
    char text[1024];
    const char *head = "#   ZeroMQ CURVE %s certificate, made by eigstream-keygen.\n#   %s\n\nmetadata\ncurve\n"
                       "    public-key = \"%s\"\n";
    snprintf(text, sizeof text, head, "secret", "Keep it secret: mode 0600, readable by the daemon's user only.",
             out->public_key);
    snprintf(text + strlen(text), sizeof text - strlen(text), "    secret-key = \"%s\"\n", out->secret_key);
    if (write_new_file(secret_path, 0600, text) != 0)
        return ERROR_TEXT_FAIL(errno == EEXIST ? CURVE_KEY_EEXIST : CURVE_KEY_EIO, err, err_bytes, "%s: %s", secret_path,
                        strerror(errno));
    snprintf(text, sizeof text, head, "public", "Give it to the other side (security.curve_allow, --curve-server-key).",
             out->public_key);
    if (write_new_file(public_path, 0644, text) != 0) {
        int saved = errno;
        unlink(secret_path);
        return ERROR_TEXT_FAIL(saved == EEXIST ? CURVE_KEY_EEXIST : CURVE_KEY_EIO, err, err_bytes, "%s: %s", public_path,
                        strerror(saved));
    }
    return CURVE_KEY_OK;
}

/* ---- allow-list ------------------------------------------------------------------ */

static curve_key_error allow_add(curve_allow_list *list, const uint8_t key[CURVE_KEY_BYTES])
{
    if (curve_allow_list_contains(list, key))
        return CURVE_KEY_OK;
    uint8_t(*grown)[CURVE_KEY_BYTES] = realloc(list->keys, (list->count + 1) * sizeof *grown);
    if (grown == NULL)
        return CURVE_KEY_ENOMEM;
    list->keys = grown;
    memcpy(list->keys[list->count++], key, CURVE_KEY_BYTES);
    return CURVE_KEY_OK;
}

/* A file of keys: bare Z85 keys or public-key lines (secret-key lines are refused). */
/* An allow-list file or directory that group or others may write lets them
 * add a key the daemon would trust: refused (CURVE_KEY_EPERM), as sshd's
 * StrictModes does for authorized_keys. */
static curve_key_error allow_mode_check(const char *path, int fd, const char *what, char *err, size_t err_bytes)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return ERROR_TEXT_FAIL(CURVE_KEY_EIO, err, err_bytes, "%s: %s", path, strerror(errno));
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return ERROR_TEXT_FAIL(CURVE_KEY_EPERM, err, err_bytes,
                               "%s: mode %04o lets group or others write the allow-list %s (and add a key): "
                               "refused (chmod go-w %s)", path, (unsigned)(st.st_mode & 07777), what, path);
    return CURVE_KEY_OK;
}

static curve_key_error allow_file_load(const char *path, curve_allow_list *list, char *err, size_t err_bytes)
{
    FILE *file = fopen(path, "r");
    if (file == NULL)
        return ERROR_TEXT_FAIL(CURVE_KEY_EIO, err, err_bytes, "%s: %s", path, strerror(errno));
    curve_key_error mode = allow_mode_check(path, fileno(file), "file", err, err_bytes);
    if (mode != CURVE_KEY_OK) {
        fclose(file);
        return mode;
    }
    char line[KEY_LINE_MAX];
    unsigned number = 0;
    curve_key_error e = CURVE_KEY_OK;
    while (e == CURVE_KEY_OK && fgets(line, sizeof line, file) != NULL) {
        const char *name;
        char *value;
        uint8_t key[CURVE_KEY_BYTES];
        number++;
        if (key_line_parse(line, &name, &value) != 0)
            e = ERROR_TEXT_FAIL(CURVE_KEY_EFORMAT, err, err_bytes, "%s:%u: not a key line", path, number);
        else if (name != NULL && name[0] == 's')
            e = ERROR_TEXT_FAIL(CURVE_KEY_EFORMAT, err, err_bytes,
                         "%s:%u: a secret key in an allow-list (list the client's NAME.key, not NAME.key_secret)",
                         path, number);
        else if (name != NULL && !z85_key_valid(value, key))
            e = ERROR_TEXT_FAIL(CURVE_KEY_EFORMAT, err, err_bytes, "%s:%u: not a 40-character Z85 key", path, number);
        else if (name != NULL && allow_add(list, key) != CURVE_KEY_OK)
            e = ERROR_TEXT_FAIL(CURVE_KEY_ENOMEM, err, err_bytes, "%s: out of memory", path);
    }
    if (e == CURVE_KEY_OK && ferror(file))
        e = ERROR_TEXT_FAIL(CURVE_KEY_EIO, err, err_bytes, "%s: %s", path, strerror(errno));
    fclose(file);
    return e;
}

/* Every *.key file of a directory. */
static curve_key_error allow_directory_load(const char *path, curve_allow_list *list, char *err, size_t err_bytes)
{
    DIR *dir = opendir(path);
    if (dir == NULL)
        return ERROR_TEXT_FAIL(CURVE_KEY_EIO, err, err_bytes, "%s: %s", path, strerror(errno));
    curve_key_error e = allow_mode_check(path, dirfd(dir), "directory", err, err_bytes);
    struct dirent *entry;
    while (e == CURVE_KEY_OK && (entry = readdir(dir)) != NULL) {
        size_t len = strlen(entry->d_name);
        if (len < 5 || strcmp(entry->d_name + len - 4, ".key") != 0)
            continue;
        char file[4096];
        snprintf(file, sizeof file, "%s/%s", path, entry->d_name);
        e = allow_file_load(file, list, err, err_bytes);
    }
    closedir(dir);
    return e;
}

curve_key_error curve_allow_list_load(const char *path, curve_allow_list *out, char *err, size_t err_bytes)
{
    memset(out, 0, sizeof *out);
    if (!zmq_has("curve"))
        return ERROR_TEXT_FAIL(CURVE_KEY_ENOCURVE, err, err_bytes, "this libzmq has no CURVE support");
    struct stat st;
    if (stat(path, &st) != 0)
        return ERROR_TEXT_FAIL(CURVE_KEY_EIO, err, err_bytes, "%s: %s", path, strerror(errno));
    curve_key_error e = S_ISDIR(st.st_mode) ? allow_directory_load(path, out, err, err_bytes)
                                            : allow_file_load(path, out, err, err_bytes);
    if (e == CURVE_KEY_OK && out->count == 0)
        e = ERROR_TEXT_FAIL(CURVE_KEY_EFORMAT, err, err_bytes, "%s: no client key (nobody could connect)", path);
    if (e != CURVE_KEY_OK)
        curve_allow_list_free(out);
    return e;
}

int curve_allow_list_contains(const curve_allow_list *list, const uint8_t key[CURVE_KEY_BYTES])
{
    for (size_t i = 0; i < list->count; i++)
        if (memcmp(list->keys[i], key, CURVE_KEY_BYTES) == 0)
            return 1;
    return 0;
}

void curve_allow_list_free(curve_allow_list *list)
{
    free(list->keys);
    list->keys = NULL;
    list->count = 0;
}
