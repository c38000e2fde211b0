package rest

// subscriptionRoutes serve subscriptions: organization and portal lists, and subscriptions with a claimed seat.
func subscriptionRoutes() []Route {
	return nil
}
