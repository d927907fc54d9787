/* conformance.c: the C client's transcript runner (docs/protocol.md section 10).
 *
 * Usage: coopsim conformance NAMESERVER --client ./conformance
 * Reads one request per line on stdin and answers the reply on stdout, through coopsim_port and
 * coopsim_call, so the conformance transcripts test this client's own request path:
 *   request:  CONN \t PORT \t COMMAND \t TEXT_HEX \t P1,P2,... \t D1,D2,...
 *   reply:    ERROR \t COMMAND \t TEXT_HEX \t P1,... \t D1,...
 * Each CONN (1 or 2) has its own sockets: one per robot (all of a robot's module names share its
 * server) or other server; /nameserver is the name server itself.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coopsim.h"

#define MAX_PORTS 64

typedef struct {
    char key[136]; /* CONN and the port's first path element, e.g. "1/bot" */
    void *sock;
} port_entry;

static port_entry ports[MAX_PORTS];
static size_t nports;

/* The socket of `port` for connection `conn`, opened on first use; NULL with `why` filled. */
static void *socket_for(coopsim_client *c, int conn, const char *port, coopsim_msg *why)
{
    if (strcmp(port, "/nameserver") == 0)
        return c->names;
    char key[136];
    size_t base = strcspn(port + 1, "/") + 1; /* "/bot/motors" -> "/bot" */
    snprintf(key, sizeof key, "%d%.*s", conn, (int)base, port);
    for (size_t i = 0; i < nports; i++)
        if (strcmp(ports[i].key, key) == 0)
            return ports[i].sock;
    void *sock = coopsim_port(c, port, why);
    if (sock && nports < MAX_PORTS) {
        snprintf(ports[nports].key, sizeof ports[nports].key, "%s", key);
        ports[nports++].sock = sock;
    }
    return sock;
}

static int hexval(char ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* Decode hex `in` into `out` (room for strlen(in) / 2 + 1 bytes), NUL-terminated. */
static void unhex(const char *in, char *out)
{
    size_t n = 0;
    for (; hexval(in[0]) >= 0 && hexval(in[1]) >= 0; in += 2)
        out[n++] = (char)(hexval(in[0]) * 16 + hexval(in[1]));
    out[n] = '\0';
}

/* Split the tab-separated `line` into exactly `n` fields in place; 0 on success. */
static int split(char *line, char **fields, int n)
{
    for (int i = 0; i < n; i++) {
        fields[i] = line;
        line = strchr(line, i + 1 < n ? '\t' : '\n');
        if (!line)
            return i + 1 == n ? 0 : -1;
        *line++ = '\0';
    }
    return 0;
}

static void print_reply(const coopsim_msg *r)
{
    printf("%d\t%d\t", r->error, r->command);
    for (size_t i = 0; i < r->text_len; i++)
        printf("%02x", (unsigned char)r->text[i]);
    putchar('\t');
    for (size_t i = 0; i < r->nparams; i++)
        printf("%s%lld", i ? "," : "", (long long)r->params[i]);
    putchar('\t');
    for (size_t i = 0; i < r->ndata; i++)
        printf("%s%.17g", i ? "," : "", r->data[i]);
    putchar('\n');
    fflush(stdout);
}

/* Answer one request line; 0, or -1 when the line is malformed. */
static int answer(coopsim_client *c, char *line, coopsim_msg *r)
{
    char *f[6];
    int64_t params[64];
    double data[1024];
    int nparams = 0, ndata = 0;
    if (split(line, f, 6) != 0)
        return -1;
    for (char *p = f[4]; *p && nparams < 64; p += *p == ',')
        params[nparams++] = strtoll(p, &p, 10);
    for (char *p = f[5]; *p && *p != '\n' && ndata < 1024; p += *p == ',')
        data[ndata++] = strtod(p, &p);
    char *text = malloc(strlen(f[3]) / 2 + 1);
    if (!text)
        return -1;
    unhex(f[3], text);
    void *sock = socket_for(c, atoi(f[0]), f[1], r);
    if (sock)
        coopsim_call(c, sock, atoi(f[2]), text, params, nparams, data, ndata, r);
    free(text);
    print_reply(r);
    return 0;
}

int main(void)
{
    coopsim_client c;
    coopsim_msg r;
    char *line = NULL;
    size_t cap = 0;
    if (coopsim_open(&c, NULL, 10000) != 0) {
        fprintf(stderr, "conformance: %s\n", c.error);
        return 2;
    }
    coopsim_msg_init(&r);
    while (getline(&line, &cap, stdin) > 0)
        if (answer(&c, line, &r) != 0) {
            fprintf(stderr, "conformance: malformed request line\n");
            break;
        }
    for (size_t i = 0; i < nports; i++)
        coopsim_close_port(ports[i].sock);
    free(line);
    coopsim_msg_free(&r);
    coopsim_close(&c);
    return 0;
}
