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

static void set_error(coopsim_msg *m, int code, int command, const char *text)
{
    m->error = code;
    m->command = command;
    m->nparams = m->ndata = 0;
    snprintf(m->text, sizeof m->text, "%s", text);
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

/* Unpack a reply; returns 0, or -1 when it is not a five-item message. Extra items are cut. */
static int decode(const char *buf, size_t len, coopsim_msg *m)
{
    const char *p = buf, *check = buf;
    int64_t v;
    uint32_t slen, n;
    if (len == 0 || mp_check(&check, buf + len) != 0 || mp_typeof(*p) != MP_ARRAY ||
        mp_decode_array(&p) != 5 || !read_int(&p, &v))
        return -1;
    m->error = (int)v;
    if (mp_typeof(*p) != MP_STR)
        return -1;
    const char *s = mp_decode_str(&p, &slen);
    size_t keep = slen < COOPSIM_TEXT_MAX - 1 ? slen : COOPSIM_TEXT_MAX - 1;
    memcpy(m->text, s, keep);
    m->text[keep] = '\0';
    if (!read_int(&p, &v) || mp_typeof(*p) != MP_ARRAY)
        return -1;
    m->command = (int)v;
    n = mp_decode_array(&p);
    m->nparams = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!read_int(&p, &v))
            return -1;
        if (i < COOPSIM_PARAMS_MAX)
            m->params[m->nparams++] = v;
    }
    if (mp_typeof(*p) != MP_ARRAY)
        return -1;
    n = mp_decode_array(&p);
    m->ndata = 0;
    for (uint32_t i = 0; i < n; i++) {
        double d;
        if (!read_number(&p, &d))
            return -1;
        if (i < COOPSIM_DATA_MAX)
            m->data[m->ndata++] = d;
    }
    return 0;
}

static void *connect_req(void *ctx, const char *endpoint)
{
    void *s = zmq_socket(ctx, ZMQ_REQ);
    int on = 1, zero = 0;
    if (!s)
        return NULL;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(s, ZMQ_REQ_RELAXED, &on, sizeof on);   /* a timed-out request does not wedge */
    zmq_setsockopt(s, ZMQ_REQ_CORRELATE, &on, sizeof on); /* ...and its late reply is dropped */
    if (zmq_connect(s, endpoint) != 0) {
        zmq_close(s);
        return NULL;
    }
    return s;
}

int coopsim_open(coopsim_client *c, const char *nameserver, int timeout_ms)
{
    if (!nameserver)
        nameserver = getenv("COOPSIM_NAMESERVER");
    if (!nameserver || !*nameserver)
        nameserver = COOPSIM_DEFAULT_NAMESERVER;
    c->timeout_ms = timeout_ms > 0 ? timeout_ms : 5000;
    c->ctx = zmq_ctx_new();
    c->names = c->ctx ? connect_req(c->ctx, nameserver) : NULL;
    if (!c->names) {
        if (c->ctx)
            zmq_ctx_term(c->ctx);
        return -1;
    }
    return 0;
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
    if (zmq_send(sock, buf, len, 0) < 0 || zmq_poll(&item, 1, c->timeout_ms) <= 0) {
        set_error(reply, COOPSIM_TIMEOUT, command, "no reply within the timeout");
        return reply->error;
    }
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    int got = zmq_msg_recv(&msg, sock, 0);
    if (got < 0 || decode(zmq_msg_data(&msg), zmq_msg_size(&msg), reply) != 0)
        set_error(reply, 1, command, "the reply is not a five-item msgpack message");
    zmq_msg_close(&msg);
    return reply->error;
}

void *coopsim_port(coopsim_client *c, const char *name, coopsim_msg *why)
{
    coopsim_msg local;
    coopsim_msg *r = why ? why : &local;
    if (coopsim_call(c, c->names, 1, name, NULL, 0, NULL, 0, r) != 0)
        return NULL;
    void *s = connect_req(c->ctx, r->text);
    if (!s)
        set_error(r, 8, 1, "cannot connect to the endpoint the name server gave");
    return s;
}

void coopsim_close_port(void *sock)
{
    if (sock)
        zmq_close(sock);
}

void coopsim_close(coopsim_client *c)
{
    coopsim_close_port(c->names);
    zmq_ctx_term(c->ctx);
}
