#!/bin/sh
# Makes a throwaway certificate authority and one certificate per node for mutual TLS:
#   examples/ping-pong/scripts/make-certs.sh <out-dir> <node-name>...
# writes <out-dir>/ca.crt, and <out-dir>/<node-name>.crt and .key for each node. A node's
# certificate names the node (DNS:<node-name>, its advertised host in docker-compose), plus
# localhost and 127.0.0.1 for local runs: Granary accepts a peer only if its certificate covers
# the host of the address it states (or its member id). The CA key is deleted at the end, so
# nothing else can ever be signed with it. For trying mutual TLS out, not for production PKI.
set -eu
[ "$#" -ge 2 ] || { echo "usage: $0 <out-dir> <node-name>..." >&2; exit 2; }
out="$1"
shift
mkdir -p "$out"
cd "$out"
umask 077
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
# shellcheck disable=SC2086
openssl req -x509 $ec -keyout ca.key -out ca.crt -days 30 -subj /CN=granary-throwaway-ca 2>/dev/null
for name in "$@"; do
  printf 'subjectAltName=DNS:%s,DNS:localhost,IP:127.0.0.1\n' "$name" > "$name.ext"
  # shellcheck disable=SC2086
  openssl req $ec -keyout "$name.key" -out "$name.csr" -subj "/CN=$name" 2>/dev/null
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
    -out "$name.crt" -days 30 -extfile "$name.ext" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
done
rm -f ca.key ca.srl
chmod 644 ca.crt ./*.crt
echo "wrote $out: ca.crt and a certificate and key for: $*"
