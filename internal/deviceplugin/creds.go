package deviceplugin

import (
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// insecureCreds: the kubelet's device-plugin sockets are local unix sockets
// protected by file permissions; the protocol uses no TLS.
func insecureCreds() credentials.TransportCredentials { return insecure.NewCredentials() }
