/* camera.c: read one image from a robot's camera3d with its pixels in a ZeroMQ frame of their
 * own (protocol 11; docs/protocol.md, "Camera images") and print what it holds.
 *
 * Usage: ./camera ROBOT   reads `rgbd raw frame` and prints one line
 * `step width height frame_bytes R G B depth`: the size of the pixel frame and the centre
 * pixel's colour (0-255) and depth (m, float32 little-endian in the frame after the RGB bytes,
 * as the reply's text says). The name server is $COOPSIM_NAMESERVER or tcp://127.0.0.1:10000.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coopsim.h"

/* The centre pixel of the frame, placed by the text's lines "<encoding> <format> frame <offset>
 * <length>" (rgb8 first, then 32FC1). Returns 0, or 1 when the lines do not say so. */
static int centre(const coopsim_msg *r, long w, long h)
{
    long rgb_at, rgb_len, depth_at, depth_len;
    if (sscanf(r->text, "rgb8 raw frame %ld %ld\n32FC1 raw frame %ld %ld", &rgb_at, &rgb_len,
               &depth_at, &depth_len) != 4 || (size_t)(depth_at + depth_len) > r->frame_len
        || rgb_len != w * h * 3 || depth_len != w * h * 4)
        return 1;
    size_t px = (size_t)(h / 2 * w + w / 2);
    const unsigned char *rgb = r->frame + rgb_at + 3 * px;
    float depth;
    memcpy(&depth, r->frame + depth_at + 4 * px, sizeof depth); /* little-endian hosts */
    printf("%lld %ld %ld %zu %d %d %d %.3f\n", (long long)r->params[0], w, h, r->frame_len,
           rgb[0], rgb[1], rgb[2], depth);
    return 0;
}

int main(int argc, char **argv)
{
    coopsim_client c;
    coopsim_robot bot;
    coopsim_msg r;
    int status = 1;

    if (argc != 2) {
        fprintf(stderr, "usage: camera ROBOT\n");
        return 2;
    }
    coopsim_msg_init(&r);
    if (coopsim_open(&c, NULL, 30000) != 0) {
        fprintf(stderr, "camera: %s\n", c.error);
        return 1;
    }
    if (coopsim_robot_open(&c, &bot, argv[1], &r) == 0) {
        if (coopsim_invoke(&c, &bot, "camera3d", "read", "rgbd raw frame", NULL, 0, NULL, 0,
                           &r) == 0 && r.nparams == 3) {
            status = centre(&r, (long)r.params[1], (long)r.params[2]);
            if (status)
                fprintf(stderr, "camera: the reply's lines do not place its frame: %s\n", r.text);
        }
        coopsim_robot_close(&bot);
    }
    if (r.error != 0)
        fprintf(stderr, "camera: error %d: %s\n", r.error, r.text);
    coopsim_msg_free(&r);
    coopsim_close(&c);
    return status;
}
