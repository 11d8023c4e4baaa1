/*
 * keygen_main.c - eigstream-keygen: makes a ZeroMQ CURVE key pair for the
 * daemon (security.curve_secret_key) or a client (its public file goes in
 * the daemon's security.curve_allow).
 *
 *   eigstream-keygen BASE    writes BASE.key (public, 0644) and
 *                            BASE.key_secret (the pair, 0600)
 *
 * Refuses to overwrite either file (exit 1); prints the public key.
 * The files are curve_keys.h's (czmq / pyzmq certificate layout).
 */
#include <stdio.h>

#include "cli_options.h"
#include "curve_keys.h"

int main(int argc, char **argv)
{
    const cli_option table[] = {CLI_END};
    const cli_spec spec = {
        .prog = "eigstream-keygen",
        .synopsis = "BASE",
        .description = "Makes a CURVE key pair: BASE.key (public, mode 0644) and BASE.key_secret\n"
                       "(public and secret, mode 0600). Refuses to overwrite an existing key.",
        .options = table,
        .positional_max = 1,
        .epilogue = "The daemon's pair: security.curve_secret_key = \"BASE.key_secret\"; give BASE.key\n"
                    "to its clients (--curve-server-key). A client's pair: put BASE.key in the\n"
                    "daemon's security.curve_allow; the client uses BASE.key_secret (--curve-key).\n",
    };
    cli_args args;
    int status = cli_parse_or_report(&spec, argc, argv, 1, &args, 2);
    if (status >= 0)
        return status;
    if (args.positional_count != 1)
        return cli_usage_error("eigstream-keygen", "expected BASE, the files' name without .key");
    curve_key_pair keys;
    char err[512];
    if (curve_key_pair_write(args.positional[0], &keys, err, sizeof err) != CURVE_KEY_OK)
        return cli_fatal("eigstream-keygen", "%s", err);
    printf("%s.key         public key %s\n%s.key_secret  secret key (mode 0600)\n", args.positional[0],
           keys.public_key, args.positional[0]);
    return 0;
}
