module lifecycle

go 1.19

require example.com/agencysandbox v0.0.0

replace example.com/agencysandbox => ../../../../examples/go
