module example.com/agencysandbox

go 1.19
