package wake

import "github.com/lib/pq"

// WithDialer makes l connect through d, so tests can cut its connection.
func WithDialer(l *Listener, d pq.Dialer) { l.dialer = d }
