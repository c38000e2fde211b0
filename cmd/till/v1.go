package main

import (
	"log/slog"
	"net/http"

	"till/resolvers"
)

func newV1(r *resolvers.Resolver, authn func(http.Handler) http.Handler, logger *slog.Logger) (http.Handler, error) {
	return http.NotFoundHandler(), nil
}
