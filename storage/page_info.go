package storage

// PageInfo is a window's place in its list, as GraphQL's PageInfo shows it. Its cursors are
// encoded only when a client selects them: every window of a page of relations has one,
// and most queries read none.
type PageInfo struct {
	HasNextPage, HasPreviousPage bool
	start, end                   *Cursor
}

// PageInfoOf is the page info of window p, its cursors those of its first and last rows.
func PageInfoOf[T any](p Paged[T], hasNext, hasPrevious bool) *PageInfo {
	info := &PageInfo{HasNextPage: hasNext, HasPreviousPage: hasPrevious}
	if n := len(p.Cursors); n > 0 {
		info.start, info.end = &p.Cursors[0], &p.Cursors[n-1]
	}
	return info
}

// StartCursor is the cursor of the window's first row, nil when it is empty.
func (p *PageInfo) StartCursor() *string { return cursorString(p.start) }

// EndCursor is the cursor of the window's last row, nil when it is empty.
func (p *PageInfo) EndCursor() *string { return cursorString(p.end) }

func cursorString(c *Cursor) *string {
	if c == nil {
		return nil
	}
	s := c.String()
	return &s
}
