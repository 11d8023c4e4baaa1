/*
 * cli_curve.c - CURVE client sockets for the tools (cli_curve.h).
 */
#include <stdio.h>
#include <string.h>
#include <zmq.h>

#include "cli_curve.h"
#include "curve_keys.h"

int cli_curve_apply(const cli_curve *curve, void *sock, char *err, size_t err_bytes)
{
    if (curve->server_key == NULL && curve->client_key == NULL)
        return 0;
    if (curve->server_key == NULL || curve->client_key == NULL) {
        snprintf(err, err_bytes, "--curve-server-key and --curve-key go together");
        return -1;
    }
    curve_key_pair server, client;
    char why[512];
    if (curve_key_file_read(curve->server_key, 0, &server, why, sizeof why) != CURVE_KEY_OK) {
        snprintf(err, err_bytes, "--curve-server-key: %s", why);
        return -1;
    }
    if (curve_key_file_read(curve->client_key, 1, &client, why, sizeof why) != CURVE_KEY_OK) {
        snprintf(err, err_bytes, "--curve-key: %s", why);
        return -1;
    }
    int rc = zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, server.public_key, sizeof server.public_key) != 0 ||
             zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, client.public_key, sizeof client.public_key) != 0 ||
             zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, client.secret_key, sizeof client.secret_key) != 0;
    memset(&client, 0, sizeof client);
    if (rc != 0) {
        snprintf(err, err_bytes, "CURVE socket options: %s", zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}
