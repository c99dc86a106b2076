/*
 * A native addon as a document that took over a parser would load (test/pool/isolation.test.ts):
 * it reads files and opens connections with the C library, below Node's permission model. N-API's
 * few declarations it uses are written out here, so it builds with `cc` alone, without headers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;
typedef struct napi_callback_info__ *napi_callback_info;
typedef int napi_status;
typedef napi_value (*napi_callback)(napi_env, napi_callback_info);
napi_status napi_get_cb_info(napi_env, napi_callback_info, size_t *, napi_value *, napi_value *, void **);
napi_status napi_get_value_string_utf8(napi_env, napi_value, char *, size_t, size_t *);
napi_status napi_get_value_int32(napi_env, napi_value, int32_t *);
napi_status napi_create_int32(napi_env, int32_t, napi_value *);
napi_status napi_create_string_utf8(napi_env, const char *, size_t, napi_value *);
napi_status napi_create_function(napi_env, const char *, size_t, napi_callback, void *, napi_value *);
napi_status napi_set_named_property(napi_env, napi_value, const char *, napi_value);

/* read(path): the file's first 4 KiB as a string, or its errno as a number. */
static napi_value read_file(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  char path[4096], buffer[4096];
  size_t length;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  napi_get_value_string_utf8(env, argv[0], path, sizeof path, &length);
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    napi_create_int32(env, errno, &result);
    return result;
  }
  ssize_t got = read(fd, buffer, sizeof buffer);
  int error = errno;
  close(fd);
  if (got < 0) napi_create_int32(env, error, &result);
  else napi_create_string_utf8(env, buffer, (size_t)got, &result);
  return result;
}

/* connect(port): 0 when a TCP connection to 127.0.0.1:port opens, or its errno. */
static napi_value connect_loopback(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  int32_t port;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  napi_get_value_int32(env, argv[0], &port);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int outcome = fd < 0 ? errno : (connect(fd, (struct sockaddr *)&address, sizeof address) == 0 ? 0 : errno);
  if (fd >= 0) close(fd);
  napi_create_int32(env, outcome, &result);
  return result;
}

napi_value napi_register_module_v1(napi_env env, napi_value exports) {
  napi_value function;
  napi_create_function(env, "read", 4, read_file, NULL, &function);
  napi_set_named_property(env, exports, "read", function);
  napi_create_function(env, "connect", 7, connect_loopback, NULL, &function);
  napi_set_named_property(env, exports, "connect", function);
  return exports;
}
