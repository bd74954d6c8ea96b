'use strict';
// The manage page (filled in by the issue 13 work).
