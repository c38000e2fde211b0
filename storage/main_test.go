package storage_test

import (
	"os"
	"testing"

	"till/storage/storagetest"
)

func TestMain(m *testing.M) { os.Exit(storagetest.Main(m)) }
