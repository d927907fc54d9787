/* coopsim.c: the coopsim wire protocol over libzmq, messages packed with msgpuck.
 * See coopsim.h for the API and docs/protocol.md for the protocol. */
#include "coopsim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpuck.h>
#include <zmq.h>

#define MAX_MESSAGE 65536 /* the servers drop connections that send more */

void coopsim_msg_init(coopsim_msg *m)
{
    memset(m, 0, sizeof *m);
    m->text = m->note; /* "" until the first reply */
}

void coopsim_msg_free(coopsim_msg *m)
{
    free(m->text_buf);
    free(m->params);
    free(m->data);
    free(m->frame);
    coopsim_msg_init(m);
}

/* A client-side error whose sentence is already in the message's own note (needs no memory). */
static void fail(coopsim_msg *m, int code, int command)
{
    m->error = code;
    m->command = command;
    m->nparams = m->ndata = 0;
    m->text = m->note;
    m->text_len = strlen(m->note);
}

static void set_error(coopsim_msg *m, int code, int command, const char *text)
{
    snprintf(m->note, sizeof m->note, "%s", text);
    fail(m, code, command);
}

/* Make room for n items of `size` bytes in *buf (capacity *cap); returns 0, or -1 out of memory.
 * Buffers only grow, so a loop of calls stops allocating once it has seen its largest reply. */
static int reserve(void **buf, size_t *cap, size_t n, size_t size)
{
    if (n <= *cap)
        return 0;
    void *p = realloc(*buf, n * size);
    if (!p)
        return -1;
    *buf = p;
    *cap = n;
    return 0;
}

/* Pack [0, text, command, params, data]; returns the length, or 0 when it would not fit. */
static size_t encode(char *buf, int command, const char *text, const int64_t *params,
                     int nparams, const double *data, int ndata)
{
    uint32_t tlen = (uint32_t)strlen(text);
    size_t need = 1 + 1 + mp_sizeof_str(tlen) + 9 + 5 + 9 * (size_t)nparams + 5 + 9 * (size_t)ndata;
    if (need > MAX_MESSAGE)
        return 0;
    char *p = mp_encode_array(buf, 5);
    p = mp_encode_uint(p, 0); /* requests carry error code 0 */
    p = mp_encode_str(p, text, tlen);
    p = command >= 0 ? mp_encode_uint(p, (uint64_t)command) : mp_encode_int(p, command);
    p = mp_encode_array(p, (uint32_t)nparams);
    for (int i = 0; i < nparams; i++)
        p = params[i] >= 0 ? mp_encode_uint(p, (uint64_t)params[i]) : mp_encode_int(p, params[i]);
    p = mp_encode_array(p, (uint32_t)ndata);
    for (int i = 0; i < ndata; i++)
        p = mp_encode_double(p, data[i]);
    return (size_t)(p - buf);
}

static int read_int(const char **p, int64_t *out)
{
    switch (mp_typeof(**p)) {
    case MP_UINT: *out = (int64_t)mp_decode_uint(p); return 1;
    case MP_INT: *out = mp_decode_int(p); return 1;
    default: return 0;
    }
}

static int read_number(const char **p, double *out)
{
    int64_t i;
    switch (mp_typeof(**p)) {
    case MP_DOUBLE: *out = mp_decode_double(p); return 1;
    case MP_FLOAT: *out = mp_decode_float(p); return 1;
    default:
        if (!read_int(p, &i))
            return 0;
        *out = (double)i;
        return 1;
    }
}

#define BAD_REPLY (-2)

static int decode_text(const char **p, coopsim_msg *m)
{
    uint32_t n;
    if (mp_typeof(**p) != MP_STR)
        return BAD_REPLY;
    const char *s = mp_decode_str(p, &n);
    if (reserve((void **)&m->text_buf, &m->text_cap, (size_t)n + 1, 1) != 0)
        return COOPSIM_NO_MEMORY;
    memcpy(m->text_buf, s, n);
    m->text_buf[n] = '\0';
    m->text = m->text_buf;
    m->text_len = n;
    return 0;
}

static int decode_params(const char **p, coopsim_msg *m)
{
    if (mp_typeof(**p) != MP_ARRAY)
        return BAD_REPLY;
    uint32_t n = mp_decode_array(p);
    if (reserve((void **)&m->params, &m->params_cap, n, sizeof *m->params) != 0)
        return COOPSIM_NO_MEMORY;
    for (m->nparams = 0; m->nparams < n; m->nparams++)
        if (!read_int(p, &m->params[m->nparams]))
            return BAD_REPLY;
    return 0;
}

static int decode_data(const char **p, coopsim_msg *m)
{
    if (mp_typeof(**p) != MP_ARRAY)
        return BAD_REPLY;
    uint32_t n = mp_decode_array(p);
    if (reserve((void **)&m->data, &m->data_cap, n, sizeof *m->data) != 0)
        return COOPSIM_NO_MEMORY;
    for (m->ndata = 0; m->ndata < n; m->ndata++)
        if (!read_number(p, &m->data[m->ndata]))
            return BAD_REPLY;
    return 0;
}

/* Unpack a reply, however large, into m's buffers; returns 0, BAD_REPLY when it is not a
 * five-item message, or COOPSIM_NO_MEMORY. */
static int decode(const char *buf, size_t len, coopsim_msg *m)
{
    const char *p = buf, *check = buf;
    int64_t error, command;
    int rc;
    m->nparams = m->ndata = 0;
    if (len == 0 || mp_check(&check, buf + len) != 0 || mp_typeof(*p) != MP_ARRAY ||
        mp_decode_array(&p) != 5 || !read_int(&p, &error))
        return BAD_REPLY;
    if ((rc = decode_text(&p, m)) != 0)
        return rc;
    if (!read_int(&p, &command))
        return BAD_REPLY;
    if ((rc = decode_params(&p, m)) != 0 || (rc = decode_data(&p, m)) != 0)
        return rc;
    m->error = (int)error;
    m->command = (int)command;
    return 0;
}

/* -- CurveZMQ keys ------------------------------------------------------------------------- */

static const char Z85[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                          ".-:+=^!/*?&<>()[]{}@%$#";

/* 1 when s starts with a 40-character Z85 key that decodes, followed by end, a quote or a space. */
static int is_key(const char *s)
{
    uint8_t raw[32];
    char key[COOPSIM_KEY_LEN + 1];
    if (strspn(s, Z85) != COOPSIM_KEY_LEN || strchr("\"' \t\r\n", s[COOPSIM_KEY_LEN]) == NULL)
        return 0;
    memcpy(key, s, COOPSIM_KEY_LEN);
    key[COOPSIM_KEY_LEN] = '\0';
    return zmq_z85_decode(raw, key) != NULL;
}

static const char *next_line(const char *s)
{
    const char *nl = strchr(s, '\n');
    return nl ? nl + 1 : NULL;
}

static int exists(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f)
        fclose(f);
    return f != NULL;
}

/* Copy the key of `field` ("public-key" or "secret-key") out of certificate text: a line
 * `    field = "KEY"` (ZeroMQ's certificate format). 1 found, 0 absent, -1 malformed. */
static int cert_key(const char *text, const char *field, char out[COOPSIM_KEY_LEN + 1])
{
    size_t n = strlen(field);
    for (const char *line = text; line; line = next_line(line)) {
        const char *p = line + strspn(line, " \t");
        if (strncmp(p, field, n) != 0)
            continue;
        p += n;
        p += strspn(p, " \t");
        if (*p++ != '=')
            return -1;
        p += strspn(p, " \t\"'");
        if (!is_key(p))
            return -1;
        memcpy(out, p, COOPSIM_KEY_LEN);
        out[COOPSIM_KEY_LEN] = '\0';
        return 1;
    }
    return 0;
}

/* Read certificate `path` into its public (and, if `secret` is not NULL, secret) key. */
static int read_cert(const char *path, char *public_key, char *secret, char *why, size_t size)
{
    char text[8192];
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, size, "%s: %s", path, strerror(errno));
        return -1;
    }
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    if (cert_key(text, "public-key", public_key) != 1) {
        snprintf(why, size, "%s: no well-formed public-key line (not a ZeroMQ certificate?)",
                 path);
        return -1;
    }
    if (secret && cert_key(text, "secret-key", secret) != 1) {
        snprintf(why, size, "%s: no well-formed secret-key line (give the .key_secret file)",
                 path);
        return -1;
    }
    return 0;
}

int coopsim_keys_load(coopsim_keys *k, const char *dir, char *why, size_t why_size)
{
    char server[4096], client[4096];
    if (dir) {
        snprintf(server, sizeof server, "%s/server.key", dir);
        snprintf(client, sizeof client, "%s/client.key_secret", dir);
    } else {
        const char *s = getenv("COOPSIM_SERVER_KEY"), *c = getenv("COOPSIM_CLIENT_KEY");
        if ((!s || !*s) && (!c || !*c))
            return 0;
        if (!s || !*s || !c || !*c) {
            snprintf(why, why_size, "%s is not set: a Curve client needs both "
                     "COOPSIM_SERVER_KEY and COOPSIM_CLIENT_KEY",
                     !s || !*s ? "COOPSIM_SERVER_KEY" : "COOPSIM_CLIENT_KEY");
            return -1;
        }
        if (strlen(s) == COOPSIM_KEY_LEN && is_key(s) && !exists(s)) {
            memcpy(k->server, s, COOPSIM_KEY_LEN + 1); /* the key itself */
            return read_cert(c, k->public_key, k->secret_key, why, why_size) == 0 ? 1 : -1;
        }
        snprintf(server, sizeof server, "%s", s);
        snprintf(client, sizeof client, "%s", c);
    }
    if (read_cert(server, k->server, NULL, why, why_size) != 0 ||
        read_cert(client, k->public_key, k->secret_key, why, why_size) != 0)
        return -1;
    return 1;
}

/* -- is the server still there? ----------------------------------------------------------------
 * A lockstep reply comes after its step, however long that takes (other controllers, a busy
 * machine, a simulator stopped in a debugger): a call that gives up after a fixed time changes
 * the run. So a call waits its timeout, then looks at the socket's ZeroMQ monitor and, while the
 * connection is up (handshake done, not closed since), waits on (docs/protocol.md section 3). */

#define MAX_LINKS 256
static struct link {
    void *sock, *monitor;
    int connected, up, failed, lost;
} links[MAX_LINKS];

static struct link *find_link(void *sock)
{
    for (int i = 0; i < MAX_LINKS; i++)
        if (links[i].sock == sock)
            return &links[i];
    return NULL;
}

/* Start watching `sock` (before it connects); without a free slot it keeps a fixed deadline. */
static void watch(void *ctx, void *sock)
{
    struct link *l = find_link(NULL);
    char addr[64];
    if (!l)
        return;
    snprintf(addr, sizeof addr, "inproc://coopsim-link-%p", sock);
    if (zmq_socket_monitor(sock, addr, ZMQ_EVENT_CONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
                           ZMQ_EVENT_DISCONNECTED |
                           ZMQ_EVENT_CLOSED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                           ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                           ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) != 0)
        return;
    void *m = zmq_socket(ctx, ZMQ_PAIR);
    int zero = 0;
    if (!m || zmq_setsockopt(m, ZMQ_LINGER, &zero, sizeof zero) || zmq_connect(m, addr)) {
        if (m)
            zmq_close(m);
        zmq_socket_monitor(sock, NULL, 0);
        return;
    }
    l->sock = sock;
    l->monitor = m;
    l->connected = l->up = l->failed = l->lost = 0;
}

static void unwatch(void *sock)
{
    struct link *l = sock ? find_link(sock) : NULL;
    if (!l)
        return;
    zmq_socket_monitor(sock, NULL, 0);
    zmq_close(l->monitor);
    memset(l, 0, sizeof *l);
}

/* Why the server behind `sock` is not there, or NULL while it is. */
static const char *gone(void *sock)
{
    struct link *l = find_link(sock);
    if (!l)
        return "no reply within the timeout";
    for (;;) {
        zmq_msg_t f;
        uint16_t event = 0;
        zmq_msg_init(&f);
        if (zmq_msg_recv(&f, l->monitor, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&f);
            break;
        }
        if (zmq_msg_size(&f) >= sizeof event)
            memcpy(&event, zmq_msg_data(&f), sizeof event);
        int more = zmq_msg_more(&f);
        zmq_msg_close(&f);
        if (more) { /* the endpoint's address */
            zmq_msg_init(&f);
            zmq_msg_recv(&f, l->monitor, 0);
            zmq_msg_close(&f);
        }
        if (event == ZMQ_EVENT_CONNECTED)
            l->connected = 1;
        else if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
            l->up = 1;
        else if (event & (ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                          ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH))
            l->failed = 1;
        else { /* closed: a request sent before is lost with the connection */
            l->lost = l->lost || l->up;
            l->up = l->connected = 0;
        }
    }
    if (l->lost)
        return "no reply: its connection closed (the server stopped or crashed)";
    if (l->up || (l->connected && !l->failed))
        return NULL; /* there, or its handshake goes on (ZeroMQ gives it 30 s) */
    if (l->failed)
        return "no reply: it refused the handshake (keys it does not accept, or not a request "
               "server)";
    return "no reply: no connection to it (nothing listens there)";
}

static void *connect_req(coopsim_client *c, const char *endpoint)
{
    void *s = zmq_socket(c->ctx, ZMQ_REQ);
    int on = 1, zero = 0;
    if (!s)
        return NULL;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(s, ZMQ_REQ_RELAXED, &on, sizeof on);   /* a timed-out request does not wedge */
    zmq_setsockopt(s, ZMQ_REQ_CORRELATE, &on, sizeof on); /* ...and its late reply is dropped */
    /* A send may wait: a connection refused at the CurveZMQ handshake leaves nowhere to send. */
    zmq_setsockopt(s, ZMQ_SNDTIMEO, &c->timeout_ms, sizeof c->timeout_ms);
    if ((c->curve && (zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, c->keys.server, COOPSIM_KEY_LEN) ||
                      zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, c->keys.public_key,
                                     COOPSIM_KEY_LEN) ||
                      zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, c->keys.secret_key,
                                     COOPSIM_KEY_LEN))) ||
        (watch(c->ctx, s), zmq_connect(s, endpoint) != 0)) {
        unwatch(s);
        zmq_close(s);
        return NULL;
    }
    return s;
}

int coopsim_open_keys(coopsim_client *c, const char *nameserver, int timeout_ms,
                      const char *keys_dir)
{
    memset(c, 0, sizeof *c);
    if (!nameserver)
        nameserver = getenv("COOPSIM_NAMESERVER");
    if (!nameserver || !*nameserver)
        nameserver = COOPSIM_DEFAULT_NAMESERVER;
    c->timeout_ms = timeout_ms > 0 ? timeout_ms : 5000;
    c->curve = coopsim_keys_load(&c->keys, keys_dir, c->error, sizeof c->error);
    if (c->curve < 0)
        return -1;
    c->ctx = zmq_ctx_new();
    c->names = c->ctx ? connect_req(c, nameserver) : NULL;
    if (!c->names) {
        snprintf(c->error, sizeof c->error, "cannot connect to the name server %s: %s",
                 nameserver, zmq_strerror(zmq_errno()));
        if (c->ctx)
            zmq_ctx_term(c->ctx);
        return -1;
    }
    return 0;
}

int coopsim_open(coopsim_client *c, const char *nameserver, int timeout_ms)
{
    return coopsim_open_keys(c, nameserver, timeout_ms, NULL);
}

/* Protocol 11: the reply's frames after its message, the first kept in reply->frame (a camera
 * read's pixels), any others read and dropped so the socket is ready for the next request. */
static int receive_frame(void *sock, coopsim_msg *reply)
{
    int rc = 0, first = 1, more = 1;
    while (more) {
        zmq_msg_t part;
        zmq_msg_init(&part);
        if (zmq_msg_recv(&part, sock, 0) < 0) {
            zmq_msg_close(&part);
            return rc;
        }
        size_t n = zmq_msg_size(&part);
        if (first && reserve((void **)&reply->frame, &reply->frame_cap, n ? n : 1, 1) == 0) {
            memcpy(reply->frame, zmq_msg_data(&part), n);
            reply->frame_len = n;
        } else if (first) {
            rc = COOPSIM_NO_MEMORY;
        }
        first = 0;
        more = zmq_msg_more(&part);
        zmq_msg_close(&part);
    }
    return rc;
}

int coopsim_call(coopsim_client *c, void *sock, int command, const char *text,
                 const int64_t *params, int nparams, const double *data, int ndata,
                 coopsim_msg *reply)
{
    char buf[MAX_MESSAGE];
    size_t len = encode(buf, command, text ? text : "", params, nparams, data, ndata);
    if (len == 0) {
        set_error(reply, 1, command, "request over 65536 bytes");
        return reply->error;
    }
    zmq_pollitem_t item = {sock, 0, ZMQ_POLLIN, 0};
    if (zmq_send(sock, buf, len, 0) < 0) {
        set_error(reply, COOPSIM_TIMEOUT, command, "no reply within the timeout");
        return reply->error;
    }
    for (;;) { /* late: wait on while the server is there */
        int rc = zmq_poll(&item, 1, c->timeout_ms);
        const char *why = rc < 0 && zmq_errno() != EINTR ? "no reply: the socket failed" : NULL;
        if (rc > 0)
            break;
        if (why || (rc == 0 && (why = gone(sock)) != NULL)) {
            set_error(reply, COOPSIM_TIMEOUT, command, why);
            return reply->error;
        }
    }
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    /* A zmq_msg_t holds the whole frame, whatever its size: nothing is cut. */
    int rc = BAD_REPLY;
    if (zmq_msg_recv(&msg, sock, 0) >= 0)
        rc = decode(zmq_msg_data(&msg), zmq_msg_size(&msg), reply);
    int more = zmq_msg_more(&msg);
    zmq_msg_close(&msg);
    reply->frame_len = 0;
    if (more && receive_frame(sock, reply) != 0 && rc == 0)
        rc = COOPSIM_NO_MEMORY;
    if (rc == COOPSIM_NO_MEMORY)
        set_error(reply, rc, command, "out of memory for the reply");
    else if (rc != 0)
        set_error(reply, 1, command, "the reply is not a five-item msgpack message");
    return reply->error;
}

void *coopsim_port(coopsim_client *c, const char *name, coopsim_msg *why)
{
    coopsim_msg local;
    coopsim_msg *r = why ? why : &local;
    void *s = NULL;
    if (!why)
        coopsim_msg_init(&local);
    if (coopsim_call(c, c->names, 1, name, NULL, 0, NULL, 0, r) == 0) {
        s = connect_req(c, r->text);
        if (!s)
            set_error(r, 8, 1, "cannot connect to the endpoint the name server gave");
    }
    if (!why)
        coopsim_msg_free(&local);
    return s;
}

/* -- a robot's command table ------------------------------------------------------------------ */

/* Cut the next space-separated word out of *p (NUL-terminating it in place); NULL at the end. */
static char *next_word(char **p)
{
    while (**p == ' ')
        (*p)++;
    if (**p == '\0')
        return NULL;
    char *w = *p;
    while (**p != ' ' && **p != '\0')
        (*p)++;
    if (**p == ' ')
        *(*p)++ = '\0';
    return w;
}

static int to_int(const char *w, int *out)
{
    char *end;
    long v = strtol(w, &end, 10);
    if (*end != '\0' || v < 0 || v > INT32_MAX)
        return 0;
    *out = (int)v;
    return 1;
}

/* "-" stands for an empty word in command 3's lines. */
static const char *unblank(const char *w) { return strcmp(w, "-") == 0 ? "" : w; }

/* One line `id name module params_min params_max data_min data_max text kind doc`, where doc
 * is the rest of the line (protocol 1 had no doc); 0 or -1. */
static int parse_command(char *line, coopsim_command *cmd)
{
    char *w[9];
    for (int i = 0; i < 9; i++)
        if (!(w[i] = next_word(&line)))
            return -1;
    while (*line == ' ')
        line++;
    cmd->doc = unblank(line);
    if (!to_int(w[0], &cmd->id) || !to_int(w[3], &cmd->params_min) ||
        !to_int(w[4], &cmd->params_max) || !to_int(w[5], &cmd->data_min) ||
        !to_int(w[6], &cmd->data_max))
        return -1;
    cmd->name = w[1];
    cmd->module = unblank(w[2]);
    cmd->text = unblank(w[7]);
    cmd->kind = unblank(w[8]);
    return 0;
}

/* Split the table's text into bot->commands; 0, BAD_REPLY or COOPSIM_NO_MEMORY. */
static int parse_table(coopsim_robot *bot, const char *text, size_t len)
{
    size_t lines = 1;
    if (!(bot->words = malloc(len + 1)))
        return COOPSIM_NO_MEMORY;
    memcpy(bot->words, text, len + 1); /* the commands' strings point into this copy */
    for (const char *p = bot->words; *p; p++)
        lines += *p == '\n';
    if (!(bot->commands = calloc(lines, sizeof *bot->commands)))
        return COOPSIM_NO_MEMORY;
    for (char *line = bot->words; line; ) {
        char *eol = strchr(line, '\n');
        if (eol)
            *eol = '\0';
        if (*line && parse_command(line, &bot->commands[bot->ncommands++]) != 0)
            return BAD_REPLY;
        line = eol ? eol + 1 : NULL;
    }
    return 0;
}

int coopsim_robot_open(coopsim_client *c, coopsim_robot *bot, const char *name,
                       coopsim_msg *why)
{
    memset(bot, 0, sizeof *bot);
    snprintf(bot->name, sizeof bot->name, "/%s", name);
    bot->sock = coopsim_port(c, bot->name, why);
    if (!bot->sock)
        return why->error;
    const int64_t version = COOPSIM_PROTOCOL_VERSION;
    if (coopsim_call(c, bot->sock, COOPSIM_HELLO, "", &version, 1, NULL, 0, why) == 0 &&
        coopsim_call(c, bot->sock, COOPSIM_COMMANDS, "", NULL, 0, NULL, 0, why) == 0) {
        int rc = parse_table(bot, why->text, why->text_len);
        if (rc == COOPSIM_NO_MEMORY)
            set_error(why, rc, COOPSIM_COMMANDS, "out of memory for the command table");
        else if (rc != 0)
            set_error(why, 1, COOPSIM_COMMANDS, "the robot's command table is malformed");
    }
    if (why->error != 0)
        coopsim_robot_close(bot);
    return why->error;
}

/* Append s to the NUL-terminated text in buf (size bytes), cutting it when it does not fit. */
static void append(char *buf, size_t size, const char *s)
{
    size_t used = strlen(buf), n = strlen(s);
    if (used + 1 >= size)
        return;
    if (n > size - used - 1)
        n = size - used - 1;
    memcpy(buf + used, s, n);
    buf[used + n] = '\0';
}

static int has_module(const coopsim_robot *bot, const char *module, size_t before)
{
    for (size_t i = 0; i < before; i++)
        if (strcmp(bot->commands[i].module, module) == 0)
            return 1;
    return 0;
}

/* The sentence for a name the robot lacks, as the other clients word it:
 *   /robot1 has no module 'wings' (it has: motors, sonar, ...)
 *   /robot1 has no command 'motors.fly' (motors has: set_speeds, set_power, stop, read) */
static void explain_missing(const coopsim_robot *bot, const char *module, const char *name,
                            coopsim_msg *why)
{
    char *s = why->note;
    size_t size = sizeof why->note;
    int known = has_module(bot, module, bot->ncommands);
    if (known)
        snprintf(s, size, "%s has no command '%s%s%s' (%s has: ", bot->name, module,
                 *module ? "." : "", name, *module ? module : "it");
    else
        snprintf(s, size, "%s has no module '%s' (it has: ", bot->name, module);
    const char *sep = "";
    for (size_t i = 0; i < bot->ncommands; i++) {
        const coopsim_command *cmd = &bot->commands[i];
        if (known ? strcmp(cmd->module, module) != 0
                  : !*cmd->module || has_module(bot, cmd->module, i))
            continue; /* list the module's commands, or each module once */
        append(s, size, sep);
        append(s, size, known ? cmd->name : cmd->module);
        sep = ", ";
    }
    append(s, size, ")");
    fail(why, COOPSIM_UNKNOWN_NAME, -1);
}

int coopsim_id(const coopsim_robot *bot, const char *module, const char *name,
               coopsim_msg *why)
{
    for (size_t i = 0; i < bot->ncommands; i++)
        if (strcmp(bot->commands[i].module, module) == 0 &&
            strcmp(bot->commands[i].name, name) == 0)
            return bot->commands[i].id;
    if (why)
        explain_missing(bot, module, name, why);
    return -1;
}

int coopsim_invoke(coopsim_client *c, coopsim_robot *bot, const char *module, const char *name,
                   const char *text, const int64_t *params, int nparams, const double *data,
                   int ndata, coopsim_msg *reply)
{
    int id = coopsim_id(bot, module, name, reply);
    if (id < 0)
        return reply->error;
    return coopsim_call(c, bot->sock, id, text, params, nparams, data, ndata, reply);
}

void coopsim_robot_close(coopsim_robot *bot)
{
    coopsim_close_port(bot->sock);
    free(bot->commands);
    free(bot->words);
    memset(bot, 0, sizeof *bot);
}

void coopsim_close_port(void *sock)
{
    if (sock) {
        unwatch(sock);
        zmq_close(sock);
    }
}

void coopsim_close(coopsim_client *c)
{
    coopsim_close_port(c->names);
    zmq_ctx_term(c->ctx);
}

/* -- exchange ------------------------------------------------------------------------------------ */

int coopsim_exchange(coopsim_client *c, coopsim_robot *bot, int motion, const double *data,
                     int ndata, const int *reads, int nreads, coopsim_msg *reply)
{
    int64_t ids[1 + COOPSIM_EXCHANGE_MAX];
    if (nreads < 0 || nreads > COOPSIM_EXCHANGE_MAX) {
        reply->error = 4;
        return reply->error; /* the server would refuse it with 3: said before sending */
    }
    ids[0] = motion;
    for (int i = 0; i < nreads; i++)
        ids[1 + i] = reads[i];
    return coopsim_call(c, bot->sock, COOPSIM_EXCHANGE, "", ids, 1 + nreads, data, ndata, reply);
}

const double *coopsim_exchange_read(const coopsim_msg *reply, int k, size_t *n, int64_t *step)
{
    size_t at = 1; /* data[0] is the time */
    if (k < 0 || reply->error != 0 || reply->nparams < 1 + 2 * (size_t)(k + 1))
        return NULL;
    for (int i = 0; i < k; i++)
        at += (size_t)reply->params[1 + 2 * i];
    size_t count = (size_t)reply->params[1 + 2 * k];
    if (at + count > reply->ndata)
        return NULL;
    if (n)
        *n = count;
    if (step)
        *step = reply->params[2 + 2 * k];
    return reply->data + at;
}

/* -- lockstep loops ------------------------------------------------------------------------------ */

#define SIM_STATUS 1         /* /sim commands (docs/protocol.md section 4) */
#define SIM_STATE 23
#define QUEUED_POLL_MS 250   /* between two looks at /sim's status */
#define FINISHED_EVERY 4     /* of those looks, every how many also asks whether the run ended */

int coopsim_await_step(coopsim_client *c, const coopsim_msg *reply, coopsim_msg *r)
{
    if (reply->error != 0 || reply->nparams < 1 || !reply->text
        || strncmp(reply->text, COOPSIM_QUEUED, strlen(COOPSIM_QUEUED)) != 0)
        return 0;
    int64_t step = reply->params[0]; /* read before r (maybe reply) is written */
    void *sim = coopsim_port(c, "/sim", r);
    if (!sim)
        return r->error ? r->error : COOPSIM_TIMEOUT;
    int code = 0;
    for (int polls = 0;; polls++) {
        if ((code = coopsim_call(c, sim, SIM_STATUS, "", NULL, 0, NULL, 0, r)) != 0)
            break;
        if (r->nparams < 1 || r->params[0] != step)
            break; /* the step that used the command came (or the run was reset) */
        if (polls % FINISHED_EVERY == 0) {
            if ((code = coopsim_call(c, sim, SIM_STATE, "", NULL, 0, NULL, 0, r)) != 0)
                break;
            if (!strstr(r->text, "\"finished\": \"\""))
                break; /* it ended: no step will use the command */
        }
        zmq_poll(NULL, 0, QUEUED_POLL_MS); /* a portable sleep */
    }
    coopsim_close_port(sim);
    return code;
}

/* -- ownership ----------------------------------------------------------------------------------- */

int coopsim_claim(coopsim_client *c, coopsim_robot *bot, int force, coopsim_msg *reply)
{
    int64_t params[1] = {force ? 1 : 0};
    return coopsim_call(c, bot->sock, COOPSIM_CLAIM, "", params, 1, NULL, 0, reply);
}

int coopsim_release(coopsim_client *c, coopsim_robot *bot, coopsim_msg *reply)
{
    return coopsim_call(c, bot->sock, COOPSIM_RELEASE, "", NULL, 0, NULL, 0, reply);
}

/* CRC-32 as zlib computes it (reflected, polynomial 0xEDB88320). */
static unsigned long crc32_text(const char *text)
{
    unsigned long crc = 0xFFFFFFFFul;
    for (; *text; text++) {
        crc ^= (unsigned char)*text;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320ul & (0ul - (crc & 1ul)));
    }
    return crc ^ 0xFFFFFFFFul;
}

unsigned long coopsim_seed(const char *robot, unsigned long fallback)
{
    const char *own = getenv("COOPSIM_ROBOT_SEED"), *run = getenv("COOPSIM_SEED");
    char text[320];
    if (own && *own)
        return strtoul(own, NULL, 10);
    if (!run || !*run)
        return fallback;
    snprintf(text, sizeof text, "%s/%s", run, robot ? robot : "");
    return crc32_text(text);
}
