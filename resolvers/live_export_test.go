package resolvers

import "till/storage"

// LiveOrderObject exposes the shared read of a live event's object.
var LiveOrderObject = liveObject[storage.Order]
