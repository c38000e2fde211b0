package rest

// grantRoutes serve a benefit's grants.
func grantRoutes() []Route {
	return nil
}
