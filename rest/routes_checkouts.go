package rest

// checkoutRoutes serve checkout sessions.
func checkoutRoutes() []Route {
	return nil
}
