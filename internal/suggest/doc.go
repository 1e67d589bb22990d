// Package suggest finds the name a user probably meant when they typed one
// that does not exist (a misspelt flag or scenario field).
package suggest
