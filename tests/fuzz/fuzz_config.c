/*
 * fuzz_config.c - fuzzes the daemon's configuration loader with a hostile
 * configuration file.
 *
 * Contract: the input is the text of a configuration file (any bytes). It is
 * loaded with config_load (from an in-memory file) over the defaults; when
 * it loads, config_validate runs on the result, and config_write_settings's
 * text of the result is loaded back.
 *
 * Invariants: a loaded configuration validates; config_write_settings of it
 * loads back (CONFIG_OK) to the same configuration, byte for byte, and
 * writes the same text again; a failed load leaves the configuration as it
 * was and writes a non-empty message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz_support.h"

/* config_write_settings of cfg as a malloc'd text (*bytes long), or NULL. */
static char *settings_text(const eigstream_config *cfg, size_t *bytes)
{
    char *text = NULL;
    FILE *out = open_memstream(&text, bytes);
    if (out == NULL)
        return NULL;
    config_write_settings(out, cfg);
    if (fclose(out) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* Loads the written settings of cfg back and compares. */
static void require_round_trip(const eigstream_config *cfg)
{
    size_t bytes = 0, again_bytes = 0;
    char *text = settings_text(cfg, &bytes);
    const char *path = text != NULL ? fuzz_memfile_fill(1, text, bytes) : NULL;
    if (path == NULL) {
        free(text);
        return;
    }
    eigstream_config back;
    char err[CONFIG_ERROR_MAX];
    config_defaults(&back);
    config_error e = config_load(&back, path, err, sizeof err);
    if (e != CONFIG_OK)
        fprintf(stderr, "round trip: %s\n", err);
    FUZZ_REQUIRE(e == CONFIG_OK, "config_write_settings of a loaded configuration does not load");
    FUZZ_REQUIRE(memcmp(&back, cfg, sizeof back) == 0, "the written settings load back to another configuration");
    char *again = settings_text(&back, &again_bytes);
    FUZZ_REQUIRE(again == NULL || (again_bytes == bytes && memcmp(again, text, bytes) == 0),
                 "the reloaded configuration writes another text");
    free(again);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile_fill(0, data, size);
    if (path == NULL)
        return 0;
    eigstream_config cfg, before;
    char err[CONFIG_ERROR_MAX] = "";
    config_defaults(&cfg);
    before = cfg;
    if (config_load(&cfg, path, err, sizeof err) != CONFIG_OK) {
        FUZZ_REQUIRE(memcmp(&cfg, &before, sizeof cfg) == 0, "a failed load changed the configuration");
        FUZZ_REQUIRE(err[0] != '\0', "a failed load without a message");
        return 0;
    }
    FUZZ_REQUIRE(config_validate(&cfg, err, sizeof err) == CONFIG_OK, "a loaded configuration does not validate");
    require_round_trip(&cfg);
    return 0;
}
