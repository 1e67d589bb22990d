// Package canary crafts the canaries of Heller & Fetaya §V: given models
// trained on a dataset, it finds records every model classifies correctly
// and alike (AgreedRecords) and moves one of them by the smallest change it
// can find to a point every model misclassifies (Craft, after DeepFool:
// Moosavi-Dezfooli, Fawzi & Frossard, CVPR 2016), so that D′ holds the
// canary in place of the record; Canary.Features gives the four class
// probabilities an attack on the released models sees.
package canary
