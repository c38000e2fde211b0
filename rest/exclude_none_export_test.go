package rest

// ExcludeNone exposes excludeNone to the package's external tests.
var ExcludeNone = excludeNone
