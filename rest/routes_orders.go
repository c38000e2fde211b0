package rest

// orderRoutes serve orders: organization and portal lists, get and billing-details updates.
func orderRoutes() []Route {
	return nil
}
