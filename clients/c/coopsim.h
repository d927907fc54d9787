/* coopsim.h: a small C client for the coopsim wire protocol (docs/protocol.md).
 *
 * A message is one ZeroMQ frame holding a msgpack array of five items:
 *   [error_code, text, command, params (int64 array), data (double array)]
 * This client uses libzmq for the transport and msgpuck for the encoding.
 */
#ifndef COOPSIM_H
#define COOPSIM_H

#include <stdint.h>

#define COOPSIM_PROTOCOL_VERSION 1
#define COOPSIM_DEFAULT_NAMESERVER "tcp://127.0.0.1:10000"
#define COOPSIM_TEXT_MAX 8192   /* longer reply texts are cut (a /sim state JSON can be longer) */
#define COOPSIM_PARAMS_MAX 64
#define COOPSIM_DATA_MAX 1024
#define COOPSIM_TIMEOUT 9       /* error code of a request that got no reply in time */

/* One message: a request to send or a reply received. */
typedef struct {
    int error;                        /* 0 = ok; otherwise a code from docs/protocol.md section 2 */
    char text[COOPSIM_TEXT_MAX];
    int command;
    int nparams;
    int64_t params[COOPSIM_PARAMS_MAX];
    int ndata;
    double data[COOPSIM_DATA_MAX];
} coopsim_msg;

/* A connection to a simulation: a ZeroMQ context and a socket on the name server. */
typedef struct {
    void *ctx;
    void *names;
    int timeout_ms;
} coopsim_client;

/* Connect to the name server: `nameserver` NULL means $COOPSIM_NAMESERVER or the default.
 * Returns 0, or -1 with errno set. */
int coopsim_open(coopsim_client *c, const char *nameserver, int timeout_ms);

/* Look `name` (e.g. "/robot1") up and return a socket connected to it, or NULL; on NULL,
 * `why` (may be NULL) holds the error reply. Close it with coopsim_close_port. */
void *coopsim_port(coopsim_client *c, const char *name, coopsim_msg *why);

/* Send one request on `sock` and wait for its reply. Returns reply->error: 0 on success, a
 * protocol error code, or COOPSIM_TIMEOUT (9) when nothing came back within the timeout. */
int coopsim_call(coopsim_client *c, void *sock, int command, const char *text,
                 const int64_t *params, int nparams, const double *data, int ndata,
                 coopsim_msg *reply);

void coopsim_close_port(void *sock);
void coopsim_close(coopsim_client *c);

#endif
