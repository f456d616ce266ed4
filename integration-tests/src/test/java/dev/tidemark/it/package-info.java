/**
 * End-to-end tests against a real server process. They arrive with the server issue.
 */
package dev.tidemark.it;
