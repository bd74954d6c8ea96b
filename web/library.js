'use strict';
// The library page (filled in by the issue 13 work).
