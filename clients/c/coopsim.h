/* coopsim.h: a small C client for the coopsim wire protocol (docs/protocol.md).
 *
 * A message is one ZeroMQ frame holding a msgpack array of five items:
 *   [error_code, text, command, params (int64 array), data (double array)]
 * This client uses libzmq for the transport and msgpuck for the encoding.
 */
#ifndef COOPSIM_H
#define COOPSIM_H

#include <stddef.h>
#include <stdint.h>

#define COOPSIM_PROTOCOL_VERSION 14 /* sent in every hello (docs/protocol.md, Changelog) */
#define COOPSIM_DEFAULT_NAMESERVER "tcp://127.0.0.1:10000"
#define COOPSIM_TIMEOUT 9       /* error code of a request that got no reply in time */
#define COOPSIM_UNKNOWN_NAME 5  /* error code of a module or command name a robot lacks */
#define COOPSIM_OWNED 11        /* error code of a motion command to a robot another connection
                                 * owns; the reply's text names the owner */
#define COOPSIM_NO_MEMORY (-1)  /* client-side error: a reply did not fit in memory */
#define COOPSIM_KEY_LEN 40      /* a CurveZMQ key as Z85 text */

/* Commands every robot server has, at the same ids (docs/protocol.md section 3). The ids of
 * module commands (motors, sonar, ...) are not fixed: look them up with coopsim_id. */
#define COOPSIM_HELLO 0
#define COOPSIM_MODULES 1
#define COOPSIM_DETACH 2
#define COOPSIM_COMMANDS 3
#define COOPSIM_CLAIM 4         /* own the robot (params [1]: take it from its owner) */
#define COOPSIM_RELEASE 5       /* give it up */
#define COOPSIM_EXCHANGE 6      /* a motion command and the reads of its step (version 13) */
#define COOPSIM_EXCHANGE_MAX 16 /* reads one exchange carries at most */

/* One message: a reply received. Initialise it with coopsim_msg_init; every call then grows its
 * buffers to fit the reply (no reply is cut) and reuses them; coopsim_msg_free releases them.
 * Pass it by pointer: a copy would share (and then free twice) its buffers. */
typedef struct {
    int error;          /* 0 = ok; a code from docs/protocol.md section 2; or COOPSIM_NO_MEMORY */
    char *text;         /* the reply's text, NUL-terminated; text_len bytes */
    size_t text_len;
    int command;
    size_t nparams;
    int64_t *params;
    size_t ndata;
    double *data;
    /* Protocol 11: the bytes of the ZeroMQ frame after the reply's message (a camera read's
     * pixels when its text ends with `frame`: docs/protocol.md, "Camera images"); frame_len 0
     * for a reply of one frame. */
    unsigned char *frame;
    size_t frame_len;
    /* What the message owns (not for callers): the text buffer and the buffers' capacities,
     * and room for the client's own error sentences. */
    char *text_buf;
    size_t text_cap, params_cap, data_cap, frame_cap;
    char note[512];
} coopsim_msg;

/* CurveZMQ keys for a simulation started with --keys (docs/protocol.md, "Authentication"):
 * the servers' public key and this client's key pair, each 40 Z85 characters and a NUL. */
typedef struct {
    char server[COOPSIM_KEY_LEN + 1];
    char public_key[COOPSIM_KEY_LEN + 1];
    char secret_key[COOPSIM_KEY_LEN + 1];
} coopsim_keys;

/* A connection to a simulation: a ZeroMQ context and a socket on the name server. */
typedef struct {
    void *ctx;
    void *names;
    int timeout_ms;
    int curve;              /* 1: every socket is a CurveZMQ client with `keys` */
    coopsim_keys keys;
    char error[512];        /* why coopsim_open failed */
} coopsim_client;

/* One line of a robot's command table (its reply to command 3, `commands`). */
typedef struct {
    int id;
    const char *name;       /* e.g. "set_speeds" */
    const char *module;     /* e.g. "motors"; "" for the commands every robot has */
    int params_min, params_max, data_min, data_max;
    const char *text;       /* "", "opt" or "req": is the text field used, needed */
    const char *kind;       /* "read", "motion", "action", or "" */
    const char *doc;        /* one sentence: what it does, what its reply holds; "" if none */
} coopsim_command;

/* A robot: a socket on its server and its command table, fetched once when it is opened. */
typedef struct {
    void *sock;
    char name[128];         /* "/robot1" */
    size_t ncommands;
    coopsim_command *commands;
    char *words;            /* the table's text, which the commands' strings point into */
} coopsim_robot;

void coopsim_msg_init(coopsim_msg *m);
void coopsim_msg_free(coopsim_msg *m);

/* Connect to the name server: `nameserver` NULL means $COOPSIM_NAMESERVER or the default. With
 * $COOPSIM_SERVER_KEY and $COOPSIM_CLIENT_KEY set (a run sets them for the controllers it
 * launches) every socket is a CurveZMQ client with those keys. Returns 0, or -1 with a sentence
 * in c->error (then there is nothing to close). */
int coopsim_open(coopsim_client *c, const char *nameserver, int timeout_ms);

/* coopsim_open with the keys of client folder `keys_dir` (server.key and client.key_secret, as
 * `coopsim keys` makes in DIR/clients/NAME); NULL reads the environment as coopsim_open does. */
int coopsim_open_keys(coopsim_client *c, const char *nameserver, int timeout_ms,
                      const char *keys_dir);

/* Read keys from client folder `dir`, or with `dir` NULL from $COOPSIM_SERVER_KEY (a certificate
 * file, or the 40-character key itself) and $COOPSIM_CLIENT_KEY (a secret certificate file).
 * Returns 1 when keys were read, 0 when `dir` is NULL and neither variable is set, -1 on an error
 * with a sentence in `why` (`why_size` bytes). */
int coopsim_keys_load(coopsim_keys *k, const char *dir, char *why, size_t why_size);

/* Look `name` (e.g. "/sim") up and return a socket connected to it, or NULL; on NULL, `why`
 * (may be NULL) holds the error reply. Close it with coopsim_close_port. */
void *coopsim_port(coopsim_client *c, const char *name, coopsim_msg *why);

/* Send one request on `sock` and wait for its reply. When none has come within the timeout,
 * the call looks at the socket's connection (its ZeroMQ monitor) and waits on while it is up: a
 * lockstep step, a busy machine or a simulator stopped in a debugger only make a reply late.
 * Returns reply->error: 0 on success, a protocol error code, COOPSIM_TIMEOUT (9) when the
 * connection never came up or closed (reply->text says which), or COOPSIM_NO_MEMORY. A socket
 * not from coopsim_port / coopsim_robot_open keeps a fixed deadline. */
int coopsim_call(coopsim_client *c, void *sock, int command, const char *text,
                 const int64_t *params, int nparams, const double *data, int ndata,
                 coopsim_msg *reply);

/* Open robot `name` (e.g. "robot1"): look it up, connect, say hello with
 * COOPSIM_PROTOCOL_VERSION (a server of another version answers error 7 naming both), and read
 * its command table (command 3). Returns 0, or an error code with the reason in `why` (required; nothing to close
 * then). Close it with coopsim_robot_close. */
int coopsim_robot_open(coopsim_client *c, coopsim_robot *bot, const char *name,
                       coopsim_msg *why);

/* The id of `module`'s command `name` (module "" for the commands every robot has), or -1 when
 * the robot has no such command: then `why` (may be NULL) holds error 5 and a sentence. */
int coopsim_id(const coopsim_robot *bot, const char *module, const char *name,
               coopsim_msg *why);

/* coopsim_call by module and command name: returns 5 (without sending) for a name the robot
 * lacks, else as coopsim_call. */
int coopsim_invoke(coopsim_client *c, coopsim_robot *bot, const char *module, const char *name,
                   const char *text, const int64_t *params, int nparams, const double *data,
                   int ndata, coopsim_msg *reply);

/* One motion command and the reads of the step that used it, in one round trip (robot command 6,
 * docs/protocol.md section 3, "Exchange"): `motion` is the motion command's id, `data` its data,
 * `reads` the ids of 0 to COOPSIM_EXCHANGE_MAX reads. Answered when the motion's reply would be
 * (in lockstep after the step): reply->params = [step, n1, taken1, n2, taken2, ...], reply->data
 * = [time, read1..., read2...]; coopsim_exchange_read finds each read's numbers. Returns as
 * coopsim_call (4 for more than COOPSIM_EXCHANGE_MAX reads, without sending). */
int coopsim_exchange(coopsim_client *c, coopsim_robot *bot, int motion, const double *data,
                     int ndata, const int *reads, int nreads, coopsim_msg *reply);

/* The text a lockstep motion reply starts with while the step that will use its command has not
 * come: the run is paused, or its first step waits for other controllers (docs/protocol.md
 * section 3, "Motion replies and lockstep"). */
#define COOPSIM_QUEUED "lockstep: queued"

/* After `reply` (a motion command's or an exchange's), wait until a step has used its command
 * when the reply was queued (COOPSIM_QUEUED): until /sim's status (asked every 0.25 s) shows
 * another step than reply->params[0], the run was reset, or it has finished (its state
 * document, asked every 1 s, names why it ended). Any other reply returns 0 at once. Call it
 * after each iteration's motion command, and a loop counting iterations counts steps while the
 * run is paused and stepped by hand, as Python's Robot.loop does. `r` receives /sim's replies
 * (it may be `reply` itself). Returns 0, or the error code of a /sim request that failed (9:
 * the simulation is gone). */
int coopsim_await_step(coopsim_client *c, const coopsim_msg *reply, coopsim_msg *r);

/* Read `k`'s numbers (0 = the first read named) in an exchange's reply: a pointer into
 * reply->data, their count in *n and the step they were measured at in *step (either may be
 * NULL); NULL when the reply has no read `k`. */
const double *coopsim_exchange_read(const coopsim_msg *reply, int k, size_t *n, int64_t *step);

/* Own robot `bot` (docs/protocol.md section 3, "Ownership"): from now on its motion commands
 * are this connection's alone. `force` 1 takes it from another owner (for operators). Returns 0,
 * or COOPSIM_OWNED (11) with the owner named in reply->text, or another error code. */
int coopsim_claim(coopsim_client *c, coopsim_robot *bot, int force, coopsim_msg *reply);

/* Give robot `bot` up (it also leaves lockstep): 0 (reply->params[0] is 1 when it was owned),
 * or COOPSIM_OWNED when another connection owns it. */
int coopsim_release(coopsim_client *c, coopsim_robot *bot, coopsim_msg *reply);

/* The seed of ROBOT's random stream in the run that launched this controller: $COOPSIM_ROBOT_SEED,
 * else the CRC-32 of "<$COOPSIM_SEED>/<robot>", else `fallback` (started by hand without a
 * seed). Same scenario and seed, same choices: docs/protocol.md, "Launched controllers". */
unsigned long coopsim_seed(const char *robot, unsigned long fallback);

void coopsim_robot_close(coopsim_robot *bot);
void coopsim_close_port(void *sock);
void coopsim_close(coopsim_client *c);

#endif
